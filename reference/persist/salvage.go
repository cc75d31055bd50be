package persist

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tableconform/conform/reference/api"
)

// A repair keeps only what comes before the first damage: starting from a state with a hole
// in the middle would be wrong. The intact records after the damage were acknowledged all
// the same; they stay in the damaged-<time> directory, where Salvage reads them and the
// repair names them (Stats.Dropped).

// cutFile, in a damaged-<time> directory, names the log a repair cut and where: the records
// before that offset are still in the data directory and served; only those from it on were
// dropped.
const cutFile = "cut.json"

// ChangeKind is what one salvaged change does.
type ChangeKind string

// The kinds of salvaged changes.
const (
	ChangeCreateTable ChangeKind = "create-table"
	ChangeDeleteTable ChangeKind = "delete-table"
	// ChangeEntities holds the resulting state of the entities one write touched (a log
	// record), or a chunk of a table's entities (a snapshot).
	ChangeEntities ChangeKind = "entities"
)

// Change is one intact change Salvage found in a file a repair set aside.
type Change struct {
	File    string // the file's name in the damaged-<time> directory: snapshot or wal-N
	Offset  int64  // where its frame starts in the file
	Kind    ChangeKind
	Table   string
	At      time.Time    // when a table was created or deleted (zero for a snapshot's tables)
	Puts    []api.Entity // the entities stored, with the Timestamp they were stored with
	Deletes []api.Key
}

// Dropped summarizes what a repair dropped: the intact changes after the damage.
type Dropped struct {
	Changes int            // intact changes (records, snapshot chunks) no longer served
	Tables  map[string]int // changes per table
	Keys    int            // entity keys they put or delete
	Sample  []string       // the first few, "table (PartitionKey, RowKey)"
}

// String says what was dropped in one line.
func (d Dropped) String() string {
	tables := make([]string, 0, len(d.Tables))
	for t := range d.Tables {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	for i, t := range tables {
		tables[i] = fmt.Sprintf("%s (%d)", t, d.Tables[t])
	}
	s := fmt.Sprintf("%d intact changes after the damage (acknowledged writes) are no longer served: %d entity keys in tables %s",
		d.Changes, d.Keys, strings.Join(tables, ", "))
	if len(d.Sample) > 0 {
		s += "; e.g. " + strings.Join(d.Sample, ", ")
	}
	return s
}

// dropSampleKeys is how many keys Dropped names.
const dropSampleKeys = 5

// summarizeDropped reads the changes a repair set aside in dir.
func summarizeDropped(dir string) (Dropped, error) {
	d := Dropped{Tables: map[string]int{}}
	err := Salvage(dir, func(c Change) error {
		d.Changes++
		d.Tables[c.Table]++
		keys := make([]api.Key, 0, len(c.Puts)+len(c.Deletes))
		for _, e := range c.Puts {
			keys = append(keys, api.Key{PartitionKey: e.PartitionKey, RowKey: e.RowKey})
		}
		keys = append(keys, c.Deletes...)
		d.Keys += len(keys)
		for _, k := range keys {
			if len(d.Sample) < dropSampleKeys {
				d.Sample = append(d.Sample, fmt.Sprintf("%s (%q, %q)", c.Table, k.PartitionKey, k.RowKey))
			}
		}
		return nil
	})
	return d, err
}

// Salvage calls fn, in order, for every intact change in the files of dir, a damaged-<time>
// directory a repair made: the snapshot first, then the logs by generation, each from where
// the repair cut it (cut.json) or from its start. A change is intact when its frame's
// length fits and its checksum holds and it decodes; damaged bytes are skipped up to the
// next intact frame. Salvage reads only; it returns fn's first error.
func Salvage(dir string, fn func(Change) error) error {
	cuts := map[string]int64{}
	if data, err := os.ReadFile(filepath.Join(dir, cutFile)); err == nil {
		if err := json.Unmarshal(data, &cuts); err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(dir, cutFile), err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	files, err := listDir(dir)
	if err != nil {
		return err
	}
	if files.snapshot {
		if err := salvageSnapshot(dir, fn); err != nil {
			return err
		}
	}
	for _, g := range files.logs {
		name := walName(g)
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		err = intactFrames(b, cuts[name], func(at int64, p []byte) error {
			rec, err := decodeRecord(slices.Clone(p))
			if err != nil {
				return nil // its checksum holds but it does not decode: not a change
			}
			c := Change{File: name, Offset: at, Table: rec.Table, At: rec.At, Puts: rec.Puts, Deletes: rec.Deletes}
			switch rec.Kind {
			case kindCreateTable:
				c.Kind = ChangeCreateTable
			case kindDeleteTable:
				c.Kind = ChangeDeleteTable
			case kindEntities:
				c.Kind = ChangeEntities
			default:
				return nil
			}
			return fn(c)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// salvageSnapshot calls fn for the tables and entity chunks of a snapshot that are intact.
func salvageSnapshot(dir string, fn func(Change) error) error {
	b, err := os.ReadFile(filepath.Join(dir, snapshotFile))
	if err != nil {
		return err
	}
	table := ""
	return intactFrames(b, 0, func(at int64, p []byte) error {
		if len(p) > 0 && p[0] == kindSnapshotEntities {
			d := &decoder{b: slices.Clone(p[1:])}
			c := Change{File: snapshotFile, Offset: at, Kind: ChangeEntities, Table: d.string()}
			n := d.count(1)
			for range n {
				ed := &decoder{b: d.raw()}
				if x := ed.entity(); ed.err == nil {
					c.Puts = append(c.Puts, x)
				}
			}
			if d.err != nil {
				return nil
			}
			return fn(c)
		}
		rec, err := decodeRecord(slices.Clone(p))
		if err != nil || rec.Kind != kindCreateTable || rec.Table == table {
			return nil // the header, the end mark, or not a change
		}
		table = rec.Table
		return fn(Change{File: snapshotFile, Offset: at, Kind: ChangeCreateTable, Table: rec.Table})
	})
}

// intactFrames calls fn for each intact frame of b from offset start on (its length fits,
// its checksum holds, its payload is not empty), skipping damaged bytes to the next one.
func intactFrames(b []byte, start int64, fn func(at int64, payload []byte) error) error {
	for at := start; at+frameHeader < int64(len(b)); {
		if p, ok := frameAt(b, at); ok {
			if err := fn(at, p); err != nil {
				return err
			}
			at += frameHeader + int64(len(p))
			continue
		}
		at++
	}
	return nil
}

// frameAt returns the payload of the frame at offset at of b when it is intact.
func frameAt(b []byte, at int64) ([]byte, bool) {
	n := int64(binary.LittleEndian.Uint32(b[at:]))
	if n == 0 || n > maxPayload || at+frameHeader+n > int64(len(b)) {
		return nil, false
	}
	p := b[at+frameHeader : at+frameHeader+n]
	return p, crc32.Checksum(p, castagnoli) == binary.LittleEndian.Uint32(b[at+4:])
}
