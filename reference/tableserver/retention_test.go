package tableserver_test

import (
	"encoding/base64"
	"fmt"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/tableserver"
	"github.com/tableconform/conform/reference/wire"
)

// heapGrowth returns how many bytes of heap remain reachable after run, which keeps srv.
func heapGrowth(srv *tableserver.Server, run func()) int64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	run()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(srv)
	return int64(after.HeapAlloc) - int64(before.HeapAlloc)
}

// TestQueryCacheKeepsNoRequestLine: the parsed query strings a Server keeps (256 of at most
// 512 bytes) must not keep alive the request lines they came in, which may be up to
// MaxHeaderBytes long, and this before any authentication.
func TestQueryCacheKeepsNoRequestLine(t *testing.T) {
	srv := tableserver.New(reference.New())
	longPath := "/" + tableserver.DevAccountName + "/" + strings.Repeat("a", 256<<10)
	const requests = 64
	kept := heapGrowth(srv, func() {
		for i := range requests {
			r := httptest.NewRequest("GET", fmt.Sprintf("%s?k%d=v", longPath, i), nil)
			srv.ServeHTTP(httptest.NewRecorder(), r)
		}
	})
	if kept > 4<<20 {
		t.Errorf("the server keeps %d KiB after %d requests of 256 KiB paths and short distinct queries", kept>>10, requests)
	}
}

// TestServiceURLsKeepNoLongHost: the service URLs a Server keeps (64) must not each keep a
// Host of up to MaxHeaderBytes for the server's life.
func TestServiceURLsKeepNoLongHost(t *testing.T) {
	srv := tableserver.New(reference.New())
	key, _ := base64.StdEncoding.DecodeString(tableserver.DevAccountKey)
	const requests = 32
	kept := heapGrowth(srv, func() {
		for i := range requests {
			r := httptest.NewRequest("GET", "/"+tableserver.DevAccountName+"/Tables", nil)
			r.Host = fmt.Sprintf("h%d.%s:10002", i, strings.Repeat("a", 256<<10))
			r.Header.Set("Accept", "application/json;odata=nometadata")
			r.Header.Set(wire.HeaderVersion, "2019-02-02")
			wire.SignRequest(r, wire.SharedKey, tableserver.DevAccountName, key, time.Now())
			w := httptest.NewRecorder()
			srv.ServeHTTP(w, r)
			if w.Code != 200 {
				t.Fatalf("answer %d: %s", w.Code, w.Body)
			}
		}
	})
	if kept > 4<<20 {
		t.Errorf("the server keeps %d KiB after %d requests naming 256 KiB hosts", kept>>10, requests)
	}
}
