//go:build unix

package rest_test

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/tableserver"
	"github.com/tableconform/conform/suites/driver/rest"
)

// BenchmarkRoundTrip measures one single-entity operation of the driver against the
// reference server on loopback, both in this process, so that allocs/op and cpu-µs/op are
// those of the whole request path (client, net/http, server, codec, model).
func BenchmarkRoundTrip(b *testing.B) {
	cs := serveHTTP(b)
	be, err := rest.New(cs, rest.WithDirectSender())
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const table, rows = "roundtrip", 256
	if err := be.CreateTable(ctx, table); err != nil {
		b.Fatal(err)
	}
	data := strings.Repeat("x", 1024)
	entity := func(i int) api.Entity {
		return api.NewEntity("p"+strconv.Itoa(i%16), "r"+strconv.Itoa(i), map[string]api.Value{
			"Data": api.String(data), "Seq": api.Int64(int64(i)), "Base": api.Bool(true),
		})
	}
	for i := range rows {
		if _, err := be.InsertEntity(ctx, table, entity(i)); err != nil {
			b.Fatal(err)
		}
	}
	var fresh atomic.Int64
	fresh.Store(1 << 20)
	cases := []struct {
		name string
		op   func(i int) error
	}{
		{"get", func(i int) error {
			e := entity(i % rows)
			_, err := be.GetEntity(ctx, table, e.PartitionKey, e.RowKey, nil)
			return err
		}},
		{"upsert", func(i int) error {
			_, err := be.UpdateEntity(ctx, table, entity(i%rows), api.Merge, "")
			return err
		}},
		{"replace", func(i int) error {
			_, err := be.UpdateEntity(ctx, table, entity(i%rows), api.Replace, api.IfMatchAny)
			return err
		}},
		{"insert-delete", func(int) error {
			e := entity(int(fresh.Add(1)))
			if _, err := be.InsertEntity(ctx, table, e); err != nil {
				return err
			}
			return be.DeleteEntity(ctx, table, e.PartitionKey, e.RowKey, api.IfMatchAny)
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(4)
			start := cpuTime()
			var next atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := c.op(int(next.Add(1))); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64((cpuTime()-start).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// serveHTTP serves a fresh reference with the server's own http.Server settings (its
// timeouts), as suites/provision does, and returns the connection string.
func serveHTTP(b *testing.B) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := tableserver.New(reference.New(reference.WithDeleteHold(0))).HTTPServer(l.Addr().String())
	go func() { _ = srv.Serve(l) }()
	b.Cleanup(func() { _ = srv.Close() })
	return "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + tableserver.DevAccountKey + ";TableEndpoint=http://" + l.Addr().String() + "/devstoreaccount1"
}
