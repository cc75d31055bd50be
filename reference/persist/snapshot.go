package persist

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/api"
)

const (
	snapshotFile  = "snapshot"
	snapshotMagic = "conform-snapshot/1"
	// kindSnapshotEntities is a snapshot chunk: a table and its entities, each encoded on
	// its own so that restore can order them without decoding them first.
	kindSnapshotEntities byte = 4
	// snapshotChunkBytes cuts snapshot chunks (an entity is at most 1 MiB).
	snapshotChunkBytes = 4 << 20
)

func walName(gen uint64) string { return "wal-" + strconv.FormatUint(gen, 10) }

// writeSnapshot writes every table and entity of svc to dir/snapshot, naming gen as the
// log that continues it: to a temporary file, fsync'd, then renamed over the old snapshot
// and the directory fsync'd. The caller holds the write lock.
func writeSnapshot(ctx context.Context, dir string, svc *reference.Service, gen uint64) error {
	tmp := filepath.Join(dir, snapshotFile+".tmp")
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	head := &encoder{}
	head.string(snapshotMagic)
	head.uvarint(gen)
	if _, err := w.Write(frame(head.b)); err != nil {
		return err
	}
	tables, err := allTables(ctx, svc)
	if err != nil {
		return err
	}
	for _, t := range tables {
		e := &encoder{}
		if err := e.record(record{Kind: kindCreateTable, Table: t}); err != nil {
			return err
		}
		if _, err := w.Write(frame(e.b)); err != nil {
			return err
		}
		chunk, n := &encoder{}, 0
		flush := func() error {
			if n == 0 {
				return nil
			}
			out := &encoder{}
			out.byte(kindSnapshotEntities)
			out.string(t)
			out.uvarint(uint64(n))
			out.b = append(out.b, chunk.b...)
			chunk.b, n = chunk.b[:0], 0
			_, err := w.Write(frame(out.b))
			return err
		}
		q := api.Query{}
		for {
			page, err := svc.QueryEntities(ctx, t, q)
			if err != nil {
				return fmt.Errorf("snapshot of table %s: %w", t, err)
			}
			for _, x := range page.Entities {
				one := &encoder{}
				if err := one.entity(x); err != nil {
					return err
				}
				chunk.bytes(one.b)
				n++
				if len(chunk.b) >= snapshotChunkBytes {
					if err := flush(); err != nil {
						return err
					}
				}
			}
			if page.Continuation.IsZero() {
				break
			}
			q.Continuation = page.Continuation
		}
		if err := flush(); err != nil {
			return err
		}
	}
	end := &encoder{}
	if err := end.record(record{Kind: kindSnapshotEnd}); err != nil {
		return err
	}
	if _, err := w.Write(frame(end.b)); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, snapshotFile)); err != nil {
		return err
	}
	return syncDir(dir)
}

func allTables(ctx context.Context, svc *reference.Service) ([]string, error) {
	var out []string
	q := api.TableQuery{}
	for {
		p, err := svc.QueryTables(ctx, q)
		if err != nil {
			return nil, err
		}
		out = append(out, p.Tables...)
		if p.NextTableName == "" {
			return out, nil
		}
		q.NextTableName = p.NextTableName
	}
}

// snapshotEntity is an entity of a snapshot not yet decoded: its table, its Timestamp and
// its encoding.
type snapshotEntity struct {
	ts    int64 // Unix nanoseconds; entity Timestamps are write times, well inside int64
	table int32
	enc   []byte
}

// loadSnapshot restores dir/snapshot into the empty svc through apply and returns the
// generation of the log that continues it (0 without a snapshot). Entities are restored in
// the order of their Timestamps, so that the Service's strictly increasing clock gives
// each the Timestamp it had.
func loadSnapshot(dir string, r *restorer) (gen uint64, entities int, err error) {
	f, err := os.Open(filepath.Join(dir, snapshotFile))
	if errors.Is(err, os.ErrNotExist) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	bad := func(what string) error { return fmt.Errorf("snapshot %s: %s", filepath.Join(dir, snapshotFile), what) }
	p, err := readFrame(br)
	if err != nil {
		return 0, 0, bad("no header")
	}
	d := &decoder{b: p}
	if d.string() != snapshotMagic {
		return 0, 0, bad("not a conform snapshot")
	}
	gen = d.uvarint()
	if d.err != nil {
		return 0, 0, bad("bad header")
	}
	var tables []string
	var all []snapshotEntity
	complete := false
	for !complete {
		p, err := readFrame(br)
		if err == io.EOF || err == errTorn {
			return 0, 0, bad("incomplete (it was renamed into place only once complete: the file was damaged)")
		}
		if err != nil {
			return 0, 0, err
		}
		if len(p) > 0 && p[0] == kindSnapshotEntities {
			d := &decoder{b: p[1:]}
			table := d.string()
			n := d.count(1)
			if len(tables) == 0 || tables[len(tables)-1] != table {
				return 0, 0, bad("entities before their table")
			}
			for range n {
				enc := d.raw()
				h := &decoder{b: enc}
				_, _ = h.string(), h.string()
				ts := h.time()
				if h.err != nil {
					d.fail()
					break
				}
				all = append(all, snapshotEntity{ts: ts.UnixNano(), table: int32(len(tables) - 1), enc: enc})
			}
			if d.err != nil || len(d.b) != 0 {
				return 0, 0, bad("bad entity chunk")
			}
			continue
		}
		rec, err := decodeRecord(p)
		if err != nil {
			return 0, 0, bad("bad record")
		}
		switch rec.Kind {
		case kindCreateTable:
			tables = append(tables, rec.Table)
			if err := r.createTable(rec.Table, time.Unix(0, 0)); err != nil {
				return 0, 0, err
			}
		case kindSnapshotEnd:
			complete = true
		default:
			return 0, 0, bad("unexpected record")
		}
	}
	slices.SortFunc(all, func(a, b snapshotEntity) int { return cmpInt64(a.ts, b.ts) })
	for i := range all {
		d := &decoder{b: all[i].enc}
		x := d.entity()
		if d.err != nil {
			return 0, 0, bad("bad entity")
		}
		all[i].enc = nil
		if err := r.put(tables[all[i].table], x); err != nil {
			return 0, 0, err
		}
	}
	return gen, len(all), nil
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
