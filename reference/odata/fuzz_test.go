package odata

import (
	"errors"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

// fuzzEntities are the entities on which a filter and its rendering must agree.
var fuzzEntities = func() []api.Entity {
	values := []api.Value{
		api.Int32(1), api.Int64(1), api.Double(1), api.Bool(true), api.Bool(false), api.String("a"),
		api.DateTime(time.Date(2008, 7, 10, 0, 0, 0, 0, time.UTC)), api.Guid("a455c695-df98-5678-aaaa-81d3367e5a34"),
		api.Binary([]byte{0x0a}),
	}
	var out []api.Entity
	for i, v := range values {
		e := api.NewEntity(string(rune('a'+i%3)), string(rune('x'+i%2)), map[string]api.Value{
			"a": v, "b": values[(i+1)%len(values)], "Age": v, "IsActive": v, "x": v,
		})
		e.Timestamp = time.Date(2020, 1, 1, 0, 0, i, 0, time.UTC)
		out = append(out, e, api.NewEntity("", "", nil))
	}
	return out
}()

// FuzzParseFilter: no input panics; every error is a *spec.Error InvalidInput (or the
// NotImplemented that live Storage answers for unsupported comparisons); a parsed filter
// renders to a string that parses back to an equivalent filter (same rendering, count,
// answers and key range); and KeyRange holds on the sample entities.
func FuzzParseFilter(f *testing.F) {
	f.Add("PartitionKey eq 'a' and RowKey ge 'x' and RowKey lt 'y'")
	f.Fuzz(func(t *testing.T, s string) {
		flt, err := ParseFilter(s)
		if err != nil {
			var se *spec.Error
			if !errors.As(err, &se) {
				t.Fatalf("ParseFilter(%q) error %v is %T, want *spec.Error", s, err, err)
			}
			if se.Code != spec.ErrInvalidInput.Code && se.Code != spec.ErrNotImplemented.Code {
				t.Fatalf("ParseFilter(%q) = %v, want InvalidInput or NotImplemented", s, se)
			}
			return
		}
		rendered := flt.String()
		again, err := ParseFilter(rendered)
		if err != nil {
			t.Fatalf("ParseFilter(%q) renders %q, which does not parse: %v", s, rendered, err)
		}
		if again.String() != rendered || again.Comparisons() != flt.Comparisons() || again.KeyRange() != flt.KeyRange() {
			t.Fatalf("ParseFilter(%q) renders %q, which parses to a different filter %q", s, rendered, again)
		}
		r := flt.KeyRange()
		for i := range fuzzEntities {
			e := &fuzzEntities[i]
			m := flt.Match(e)
			if m != again.Match(e) {
				t.Fatalf("%q and its rendering %q disagree on %v", s, rendered, e)
			}
			if m && !r.Contains(e.PartitionKey, e.RowKey) {
				t.Fatalf("%q matches %v outside its KeyRange %+v", s, e, r)
			}
		}
	})
}
