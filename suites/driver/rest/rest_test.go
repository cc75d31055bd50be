package rest_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/tableserver"
	"github.com/tableconform/conform/reference/wire"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/driver/rest"
)

func newServer(t testing.TB) (*tableserver.Server, string) {
	srv := tableserver.New(reference.New(reference.WithDeleteHold(0)))
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return srv, "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + tableserver.DevAccountKey + ";TableEndpoint=" + ts.URL + "/devstoreaccount1"
}

func TestNewRefusesBadInputWithoutLeakingSecrets(t *testing.T) {
	for _, cs := range []string{"", "AccountName=a", "AccountName=a;AccountKey=" + tableserver.DevAccountKey + ";TableEndpoint=::"} {
		_, err := rest.New(cs)
		if err == nil {
			t.Errorf("rest.New(%q) accepted", cs)
		} else if strings.Contains(err.Error(), tableserver.DevAccountKey) {
			t.Errorf("error leaks the key: %v", err)
		}
	}
	if _, err := rest.New("UseDevelopmentStorage=true", rest.WithMergeVerb("PUT")); err == nil {
		t.Error("a PUT merge verb was accepted")
	}
	b, err := rest.New("UseDevelopmentStorage=true")
	if err != nil {
		t.Fatal(err)
	}
	info := b.Info()
	if info.Endpoint != wire.DevTableEndpoint || info.Version != "" || info.Driver != "rest" || info.Kind != "endpoint" || info.APIVersion == "" {
		t.Errorf("Info before any answer = %+v", info)
	}
	if s := fmt.Sprintf("%v", b.ConnectionString()); strings.Contains(s, tableserver.DevAccountKey) {
		t.Errorf("connection string prints its key: %s", s)
	}
}

func TestSASOnlyBackend(t *testing.T) {
	_, cs := newServer(t)
	b, err := rest.New(cs)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.CreateTable(ctx, "sasonly"); err != nil {
		t.Fatal(err)
	}
	sb, err := b.WithSAS(ctx, driver.SASOptions{Table: "sasonly", Permissions: "raud", Expiry: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sb.(driver.SASIssuer).WithSAS(ctx, driver.SASOptions{Table: "sasonly", Permissions: "r", Expiry: time.Now().Add(time.Hour)}); err == nil {
		t.Error("a SAS-only backend signed a SAS")
	}
	if _, err := sb.InsertEntity(ctx, "sasonly", api.NewEntity("p", "r", nil)); err != nil {
		t.Fatal(err)
	}
	res, err := sb.SubmitBatch(ctx, "sasonly", []api.BatchOp{{Kind: api.BatchDelete, Entity: api.NewEntity("p", "r", nil)}})
	if err != nil || len(res) != 1 {
		t.Errorf("SAS batch = %v, %v", res, err)
	}
	if s := fmt.Sprintf("%+v", sb.(driver.Describer).Info()); strings.Contains(s, "sig=") {
		t.Errorf("Info shows the SAS: %s", s)
	}
}

func TestBuildBatchFraming(t *testing.T) {
	b, _ := rest.New("AccountName=acct;AccountKey=" + tableserver.DevAccountKey)
	ct, body, err := b.BuildBatch("tbl", []api.BatchOp{
		{Kind: api.BatchInsert, Entity: api.NewEntity("p", "1", nil)},
		{Kind: api.BatchReplace, Entity: api.NewEntity("p", "it's", nil)},
	})
	if err != nil {
		t.Fatal(err)
	}
	req, err := wire.ParseBatchRequest(ct, body)
	if err != nil || len(req.Changesets) != 1 || len(req.Changesets[0]) != 2 {
		t.Fatalf("%+v, %v", req, err)
	}
	p := req.Changesets[0][1]
	if p.Method != "PUT" || p.URL != "https://acct.table.core.windows.net/tbl(PartitionKey='p',RowKey='it''s')" || p.Header.Get("If-Match") != "*" || p.Header.Get("Content-ID") != "2" {
		t.Errorf("replace part = %+v", p)
	}
	if !strings.Contains(string(body), "\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\nPOST https://acct.table.core.windows.net/tbl HTTP/1.1\r\n") {
		t.Errorf("framing:\n%s", body)
	}
}

func TestConcurrentUse(t *testing.T) {
	srv, cs := newServer(t)
	b, err := rest.New(cs)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := b.CreateTable(ctx, "concurrent"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8*25)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				e := api.NewEntity(fmt.Sprint("p", w), fmt.Sprint(i), map[string]api.Value{"v": api.Int32(int32(i))})
				if _, err := b.InsertEntity(ctx, "concurrent", e); err != nil {
					errs <- err
				}
				if _, err := b.GetEntity(ctx, "concurrent", e.PartitionKey, e.RowKey, nil); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	page, err := b.QueryEntities(ctx, "concurrent", api.Query{})
	if err != nil || len(page.Entities) != 200 {
		t.Errorf("query after concurrent inserts: %d entities, %v", len(page.Entities), err)
	}
	if srv.Recovered() != 0 {
		t.Error("the server panicked")
	}
}

// BenchmarkInsertGet measures one insert and one point read over HTTP against the reference
// server, in parallel.
func BenchmarkInsertGet(b *testing.B) {
	_, cs := newServer(b)
	be, err := rest.New(cs)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := be.CreateTable(ctx, "bench"); err != nil {
		b.Fatal(err)
	}
	var mu sync.Mutex
	n := 0
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			mu.Lock()
			n++
			rk := fmt.Sprint(n)
			mu.Unlock()
			e := api.NewEntity("p", rk, map[string]api.Value{"s": api.String("value"), "i": api.Int64(int64(len(rk)))})
			if _, err := be.InsertEntity(ctx, "bench", e); err != nil {
				b.Fatal(err)
			}
			got, err := be.GetEntity(ctx, "bench", "p", rk, nil)
			if err != nil || !got.Properties["i"].Equal(api.Int64(int64(len(rk)))) {
				b.Fatalf("get: %v, %v", got, err)
			}
		}
	})
	b.ReportMetric(float64(2*b.N)/time.Since(start).Seconds(), "requests/s")
}
