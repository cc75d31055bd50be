package tableserver_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/tableserver"
)

// rssMiB reads the process's resident set size from /proc (Linux); 0 elsewhere.
func rssMiB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return float64(kb) / 1024
		}
	}
	return 0
}

// BenchmarkNonReadingClients has 20 clients ask for a page of 1,000 entities of 50 KB
// (50 MB of JSON) and never read the answer, and reports how much the server's resident
// memory grew while they wait (rss-growth-MiB; the target is under 200 MiB) and how much
// of that growth is left once they have gone (rss-left-MiB).
func BenchmarkNonReadingClients(b *testing.B) {
	const clients = 20
	svc := reference.New()
	c := context.Background()
	if err := svc.CreateTable(c, "big"); err != nil {
		b.Fatal(err)
	}
	pad := strings.Repeat("x", 25_000)
	for i := range 1000 {
		if _, err := svc.InsertEntity(c, "big", api.NewEntity("p", fmt.Sprintf("%04d", i), map[string]api.Value{"a": api.String(pad), "b": api.String(pad)})); err != nil {
			b.Fatal(err)
		}
	}
	srv := tableserver.New(svc, tableserver.WithAllowAnonymous())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	hs := srv.HTTPServer(ln.Addr().String())
	go func() { _ = hs.Serve(tableserver.Listener(ln)) }()
	defer hs.Close()
	req := fmt.Sprintf("GET %s/big()?$top=1000 HTTP/1.1\r\nHost: 127.0.0.1\r\nx-ms-version: 2019-02-02\r\nAccept: application/json;odata=nometadata\r\n\r\n", acct)
	var growth, left float64
	b.ResetTimer()
	for range b.N {
		runtime.GC()
		debug.FreeOSMemory()
		before := rssMiB()
		conns := make([]net.Conn, 0, clients)
		for range clients {
			conn, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			if _, err := conn.Write([]byte(req)); err != nil {
				b.Fatal(err)
			}
			// Read the status line only, so that the answer has surely begun.
			resp, err := http.ReadResponse(bufio.NewReaderSize(conn, 16), nil)
			if err != nil || resp.StatusCode != http.StatusOK {
				b.Fatalf("%v %v", resp, err)
			}
			conns = append(conns, conn)
		}
		time.Sleep(time.Second) // the servers' writes fill the sockets and block
		growth = max(growth, rssMiB()-before)
		for _, conn := range conns {
			conn.Close()
		}
		time.Sleep(500 * time.Millisecond)
		runtime.GC()
		debug.FreeOSMemory()
		left = max(left, rssMiB()-before)
	}
	b.ReportMetric(growth, "rss-growth-MiB")
	b.ReportMetric(left, "rss-left-MiB")
}
