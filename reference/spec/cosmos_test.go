package spec

import (
	"slices"
	"testing"
)

// checks are the named spec checks a Cosmos difference may excuse.
var checks = []string{CheckOrder, CheckRefusal, CheckVersionHeader, CheckErrorCodeHeader, CheckClientRequestIDHeader,
	CheckRequestIDHeader, CheckMetadataLevel}

// Every Cosmos expectation names a rule, is complete for its kind and cites its evidence.
func TestCosmosExpectations(t *testing.T) {
	for id, c := range cosmos {
		r, ok := LookupRule(id)
		if !ok {
			t.Errorf("cosmos.go: %s names no rule", id)
			continue
		}
		switch c.Kind {
		case CosmosDiffers:
			if len(c.Statuses) == 0 && !c.Accepts {
				t.Errorf("%s: a different answer needs its statuses or Accepts", id)
			}
			if len(c.Statuses) > 0 && c.Accepts {
				t.Errorf("%s: a different answer is a refusal or an acceptance, not both", id)
			}
			if c.Accepts && !slices.Contains(checks, c.Check) {
				t.Errorf("%s: a difference without an error status names the check it excuses, one of %v; got %q", id, checks, c.Check)
			}
			if len(c.Statuses) > 0 && c.Check != "" {
				t.Errorf("%s: a refusal is matched by its status, not by a check (%q)", id, c.Check)
			}
		case CosmosUnsupported:
			if len(c.Statuses) == 0 {
				t.Errorf("%s: an unsupported feature needs the statuses Cosmos refuses it with", id)
			}
		case CosmosOrderUnpromised:
			if c.Check != CheckOrder {
				t.Errorf("%s: an order not promised excuses the order check only; got check %q", id, c.Check)
			}
		case CosmosUnpromised:
			if c.Evidence == "E-cosmos-order" {
				t.Errorf("%s: an order not promised is CosmosOrderUnpromised: the rest of the rule is judged", id)
			}
		default:
			t.Errorf("%s: kind %q", id, c.Kind)
		}
		if c.Answer == "" || c.Evidence == "" {
			t.Errorf("%s: answer and evidence are required", id)
		}
		switch c.Strength {
		case CosmosByTraffic, CosmosByDocs:
		case CosmosReported:
			if c.Kind == CosmosDiffers && !c.StorageToo {
				t.Errorf("%s: a difference that is only reported must accept Storage's answer too (StorageToo)", id)
			}
		default:
			t.Errorf("%s: strength %q", id, c.Strength)
		}
		if r.Cosmos.Kind != c.Kind {
			t.Errorf("%s: LookupRule gives kind %q", id, r.Cosmos.Kind)
		}
	}
}

func TestCosmosForSpecs(t *testing.T) {
	part := Cosmos{Kind: CosmosDiffers, Accepts: true, Specs: []string{"more than 252"}}
	if part.For("stores neither part when one has more than 252 properties").Kind != CosmosDiffers || part.For("stores both parts").KindOrSame() != CosmosSame {
		t.Error("For: a difference of some specs applies to them only")
	}
	if got := (Cosmos{Kind: CosmosUnsupported, Statuses: []int{501}, Code: "NotImplemented"}).Summary(); got != "unsupported: 501 NotImplemented" {
		t.Errorf("Summary %q", got)
	}
}
