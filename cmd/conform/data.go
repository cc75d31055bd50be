package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/tableconform/conform/reference/persist"
	"github.com/tableconform/conform/reference/wire"
)

func init() { extraCommands = append(extraCommands, dataCmd) }

func dataCmd() *cobra.Command {
	data := &cobra.Command{
		Use:   "data",
		Short: "Read what `conform serve --data --repair` set aside",
	}
	data.AddCommand(dataExportCmd())
	return data
}

// exportedChange is one line of `conform data export`: one change of one table, as the
// damaged-<time> directory holds it.
type exportedChange struct {
	File   string `json:"file"`
	Offset int64  `json:"offset"`
	Op     string `json:"op"` // create-table, delete-table, put, delete
	At     string `json:"at,omitempty"`
	// Entity is a put entity as an Insert or Update request body (its types annotated).
	Entity    json.RawMessage `json:"entity,omitempty"`
	Timestamp string          `json:"timestamp,omitempty"`
	// PartitionKey and RowKey name a deleted entity.
	PartitionKey *string `json:"PartitionKey,omitempty"`
	RowKey       *string `json:"RowKey,omitempty"`
}

func dataExportCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "export DAMAGED-DIR OUT-DIR",
		Short: "Write the intact changes a repair set aside as JSON lines, one file per table",
		Long: `A repair of ` + "`conform serve --data DIR --repair`" + ` keeps only what comes before the first
damaged record, and moves the damaged files into DIR/damaged-<time>: the intact records after the
damage were acknowledged, but are no longer served. export reads that directory (the snapshot, then
the logs, each from where the repair cut it, skipping damaged bytes) and writes every intact change
into OUT-DIR/<table>.jsonl, one JSON object a line, in the order they were made: {"op":"put",
"entity":{...},"timestamp":...} (the entity as an Insert or Update request body, its types
annotated), {"op":"delete","PartitionKey":...,"RowKey":...}, {"op":"create-table"} or
{"op":"delete-table"}, each with the file and offset it came from. OUT-DIR must not hold those
files yet.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDataExport(cmd.OutOrStdout(), args[0], args[1])
		},
	}
}

// runDataExport writes the intact changes of the set-aside directory from into out, one
// file per table, and lists the files it wrote.
func runDataExport(stdout io.Writer, from, out string) error {
	if info, err := os.Stat(from); err != nil || !info.IsDir() {
		return usageErr("data export: %s is not a directory a repair set aside (damaged-<time>)", from)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return usageErr("data export: %v", err)
	}
	files := &exportFiles{dir: out, writers: map[string]*bufio.Writer{}, lines: map[string]int{}}
	defer files.closeAll()
	err := persist.Salvage(from, func(c persist.Change) error { return exportChange(c, files.write) })
	if err == nil {
		err = files.flush()
	}
	if cerr := files.closeAll(); err == nil {
		err = cerr
	}
	if err != nil {
		return usageErr("data export: %v", err)
	}
	tables := make([]string, 0, len(files.lines))
	total := 0
	for t, n := range files.lines {
		tables = append(tables, t)
		total += n
	}
	sort.Strings(tables)
	fmt.Fprintf(stdout, "conform data export: %d changes of %d tables written to %s\n", total, len(tables), out)
	for _, t := range tables {
		fmt.Fprintf(stdout, "  %s.jsonl: %d\n", filepath.Join(out, t), files.lines[t])
	}
	return nil
}

// exportChange writes one salvaged change as its lines: one for a table's creation or
// deletion, one per entity put or deleted.
func exportChange(c persist.Change, write func(table string, line exportedChange) error) error {
	base := exportedChange{File: c.File, Offset: c.Offset}
	if !c.At.IsZero() {
		base.At = c.At.UTC().Format(time.RFC3339Nano)
	}
	switch c.Kind {
	case persist.ChangeCreateTable, persist.ChangeDeleteTable:
		base.Op = string(c.Kind)
		return write(c.Table, base)
	}
	for _, e := range c.Puts {
		body, err := wire.EncodeRequestEntity(e)
		if err != nil {
			return err
		}
		line := base
		line.Op, line.Entity, line.Timestamp = "put", body, e.Timestamp.UTC().Format(time.RFC3339Nano)
		if err := write(c.Table, line); err != nil {
			return err
		}
	}
	for _, k := range c.Deletes {
		line := base
		line.Op, line.PartitionKey, line.RowKey = "delete", &k.PartitionKey, &k.RowKey
		if err := write(c.Table, line); err != nil {
			return err
		}
	}
	return nil
}

// exportFiles are the files of one export, OUT-DIR/<table>.jsonl, each created when its
// table's first line is written; none may exist before.
type exportFiles struct {
	dir     string
	writers map[string]*bufio.Writer // by table
	opened  []*os.File
	lines   map[string]int // by table
}

// write writes line, as JSON, into the file of table.
func (x *exportFiles) write(table string, line exportedChange) error {
	w, ok := x.writers[table]
	if !ok {
		if table == "" || filepath.Base(table) != table || table[0] == '.' {
			return fmt.Errorf("a change names the table %q, which is no file name", table)
		}
		path := filepath.Join(x.dir, table+".jsonl")
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s already exists: export into an empty directory", path)
		}
		if err != nil {
			return err
		}
		x.opened = append(x.opened, f)
		w = bufio.NewWriter(f)
		x.writers[table] = w
	}
	b, err := json.Marshal(line)
	if err != nil {
		return err
	}
	x.lines[table]++
	_, err = w.Write(append(b, '\n'))
	return err
}

// flush writes out what each file's buffer holds; it returns the first error.
func (x *exportFiles) flush() error {
	var err error
	for _, w := range x.writers {
		if ferr := w.Flush(); ferr != nil && err == nil {
			err = ferr
		}
	}
	return err
}

// closeAll closes the files not closed yet; it returns the first error.
func (x *exportFiles) closeAll() error {
	var err error
	for _, f := range x.opened {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	x.opened = nil
	return err
}
