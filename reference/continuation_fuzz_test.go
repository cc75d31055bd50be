package reference

import (
	"errors"
	"testing"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

// FuzzDecodeContinuation: no token panics the decoders; a token that decodes re-encodes to
// itself (tokens are canonical, so a client cannot forge two spellings of one position);
// a NextTableName decodes only when this service could have issued it; and a query resumed
// from any continuation answers either a page or a 400 InvalidInput.
func FuzzDecodeContinuation(f *testing.F) {
	f.Add(EncodeKeyToken("pk"), EncodeKeyToken("rk"))
	f.Add(EncodeKeyToken(""), "")
	f.Add("1!4!YQ--", "1!0!")
	f.Add(encodeTableToken("mytable"), "1!8!AAAAAAA-")
	svc := New()
	ctx := f.Context()
	if err := svc.CreateTable(ctx, "fuzz"); err != nil {
		f.Fatal(err)
	}
	for _, k := range []api.Key{{PartitionKey: "a", RowKey: "1"}, {PartitionKey: "a", RowKey: "2"}, {PartitionKey: "b", RowKey: "1"}} {
		if _, err := svc.InsertEntity(ctx, "fuzz", api.NewEntity(k.PartitionKey, k.RowKey, nil)); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, npk, nrk string) {
		if key, err := DecodeKeyToken(npk); err == nil && EncodeKeyToken(key) != npk {
			t.Fatalf("token %q decodes to %q, which encodes to %q", npk, key, EncodeKeyToken(key))
		}
		if name, err := decodeTableToken(npk); err == nil && encodeTableToken(name) != npk {
			t.Fatalf("table token %q decodes to %q, which encodes to %q", npk, name, encodeTableToken(name))
		}
		c := api.Continuation{NextPartitionKey: npk, NextRowKey: nrk}
		pos, start, err := decodeContinuation(c)
		if err == nil && start {
			again := encodeContinuation(pos)
			if again.NextPartitionKey != npk || (nrk != "" && again.NextRowKey != nrk) {
				t.Fatalf("continuation %+v decodes to %+v, which encodes to %+v", c, pos, again)
			}
		}
		_, qerr := svc.QueryEntities(ctx, "fuzz", api.Query{Top: api.TopOf(1), Continuation: c})
		if (err == nil) != (qerr == nil) {
			t.Fatalf("decode error %v but query error %v", err, qerr)
		}
		if qerr != nil {
			requireInvalidInput(t, qerr)
		}
		_, terr := svc.QueryTables(ctx, api.TableQuery{NextTableName: npk})
		if terr != nil {
			requireInvalidInput(t, terr)
		}
	})
}

func requireInvalidInput(t *testing.T, err error) {
	t.Helper()
	var se *spec.Error
	if !errors.As(err, &se) || se.Status != 400 || se.Code != errBadContinuation().Code {
		t.Fatalf("error %v (%T) is not 400 %s", err, err, errBadContinuation().Code)
	}
}
