package modification

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
)

// guid is a canonical lower-case Guid for typed values.
const guid = "a455c695-df98-5678-aaaa-81d3367e5a34"

// instant is a fixed Edm.DateTime value with a sub-second part.
var instant = time.Date(2021, 9, 20, 21, 55, 33, 100517700, time.UTC)

// everyType holds one property of each EDM type.
func everyType() map[string]api.Value {
	return map[string]api.Value{
		"Str":   api.String("text"),
		"Bin":   api.Binary([]byte{0, 1, 2, 254, 255}),
		"Flag":  api.Bool(true),
		"When":  api.DateTime(instant),
		"Ratio": api.Double(2.5),
		"Uid":   api.Guid(guid), // not "Id", a name Cosmos reserves (entities.property.name-cosmos-reserved)
		"Small": api.Int32(-7),
		"Big":   api.Int64(1 << 40),
	}
}

// props builds a property map from name/value pairs.
func props(kv ...any) map[string]api.Value {
	m := make(map[string]api.Value, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1].(api.Value)
	}
	return m
}

// entity builds an entity from keys and name/value pairs.
func entity(pk, rk string, kv ...any) api.Entity { return api.NewEntity(pk, rk, props(kv...)) }

// mustInsert inserts e and returns what the backend stored.
func mustInsert(ctx context.Context, b api.Backend, table string, e api.Entity) api.Entity {
	GinkgoHelper()
	var got api.Entity
	framework.Requires("modify.insert.stores", "insert the spec's entity", func() {
		var err error
		got, err = b.InsertEntity(ctx, table, e)
		Expect(err).To(SucceedOnBackend(), "setting up: insert %s", e)
	})
	return got
}

// mustUpdate writes e, which the spec stored before, and returns the new ETag; the write's
// success is a precondition under updateRule.
func mustUpdate(ctx context.Context, b api.Backend, table string, e api.Entity, mode api.UpdateMode, ifMatch string) string {
	GinkgoHelper()
	var etag string
	framework.Requires(updateRule(mode, ifMatch, true), fmt.Sprintf("%s %s with If-Match %q", mode, e, ifMatch), func() {
		var err error
		etag, err = b.UpdateEntity(ctx, table, e, mode, ifMatch)
		Expect(err).To(SucceedOnBackend(), "setting up: %s %s with If-Match %q", mode, e, ifMatch)
	})
	return etag
}

// updateRule is the rule whose subject is an update in mode with ifMatch succeeding, on an
// entity that exists or not: If-Match * (concurrency.if-match-any), a specific ETag
// (concurrency.current-etag) or an upsert.
func updateRule(mode api.UpdateMode, ifMatch string, existing bool) string {
	switch {
	case ifMatch == api.IfMatchAny:
		return "concurrency.if-match-any"
	case ifMatch != "":
		return "concurrency.current-etag"
	case mode == api.Replace && existing:
		return "modify.insert-or-replace.replaces"
	case mode == api.Replace:
		return "modify.insert-or-replace.creates"
	case existing:
		return "modify.insert-or-merge.merges"
	default:
		return "modify.insert-or-merge.creates"
	}
}

// mustGet reads one entity.
func mustGet(ctx context.Context, b api.Backend, table, pk, rk string) api.Entity {
	GinkgoHelper()
	got, err := b.GetEntity(ctx, table, pk, rk, nil)
	Expect(err).To(SucceedOnBackend(), "reading (%q,%q)", pk, rk)
	return got
}
