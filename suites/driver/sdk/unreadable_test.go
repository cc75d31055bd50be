package sdk

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver"
)

// Issue 20, item 11: an answer the SDK cannot read (200 with a body that is not JSON) is the
// backend's answer, unreadable: a malformed answer with its status and bytes, never "no
// answer" (a transport error would make the run inconclusive instead of failing the rule).
func TestUnreadableAnswerIsAnAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json;odata=minimalmetadata")
		status := http.StatusOK
		if r.Method == http.MethodPost {
			status = http.StatusCreated
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte("{not json"))
	}))
	defer srv.Close()
	b, err := New("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;TableEndpoint=" + srv.URL + "/devstoreaccount1;")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	calls := map[string]error{}
	_, calls["query tables"] = b.QueryTables(ctx, api.TableQuery{})
	_, calls["query entities"] = b.QueryEntities(ctx, "t", api.Query{})
	_, calls["get entity"] = b.GetEntity(ctx, "t", "p", "r", nil)
	calls["create table"] = b.CreateTable(ctx, "t")
	for op, err := range calls {
		var m *driver.MalformedAnswerError
		if !errors.As(err, &m) || driver.IsTransport(err) || m.Status < 200 || m.Status > 201 {
			t.Errorf("%s: %T %v, want a malformed answer of a success status", op, err, err)
		}
	}

	srv.Close()
	if err := b.CreateTable(ctx, "t"); !driver.IsTransport(err) {
		t.Errorf("no answer at all: %T %v, want a transport error", err, err)
	}
}
