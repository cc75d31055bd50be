package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/tableconform/conform/suites/report"
)

func init() { extraCommands = append(extraCommands, matrixCmd) }

// The files conform matrix writes.
const (
	matrixHTML     = "matrix.html"
	matrixMarkdown = "matrix.md"
	matrixJSON     = "matrix.json"
)

func matrixCmd() *cobra.Command {
	var out, formats string
	cmd := &cobra.Command{
		Use:   "matrix DIR...",
		Short: "Compare the published runs of many implementations and versions in one page",
		Long: `conform matrix reads the published documents of many runs (each DIR holds
conformance-report.yaml, written by conform report --publish DIR, and report.json) and
writes one page that compares them: a row per rule, grouped by area, a column per
implementation@version, each cell in the report's words. For the versions of one
implementation (the name published, without any @VERSION: azurite@3.29.0 and azurite are
both azurite), it says where each rule's outcome changed: "fails since 3.29.0", "passes
since 3.31.0". It writes matrix.html (self-contained, no script), matrix.md and matrix.json
into --out.`,
		Example: `  conform report --publish runs/azurite-3.29.0
  conform report --publish runs/azurite-3.35.0
  conform matrix runs/* --out conform-matrix`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMatrix(cmd, args, out, formats)
		},
	}
	cmd.Flags().StringVar(&out, "out", "conform-matrix", "directory to write the matrix into")
	cmd.Flags().StringVar(&formats, "format", "html,md,json", "formats to write, comma-separated: html, md, json")
	return cmd
}

func runMatrix(cmd *cobra.Command, dirs []string, out, formats string) error {
	if len(dirs) == 0 {
		return usageErr("matrix needs the directories of published runs (conform report --publish DIR writes one)")
	}
	want := map[string]bool{}
	for _, f := range strings.Split(formats, ",") {
		switch f = strings.TrimSpace(f); f {
		case "html", "md", "json":
			want[f] = true
		default:
			return usageErr("--format %q: want html, md and/or json, comma-separated", f)
		}
	}
	var runs []report.MatrixRun
	for _, dir := range dirs {
		run, err := readPublishedRun(dir)
		if err != nil {
			return usageErr("%v", err)
		}
		runs = append(runs, run)
	}
	m, err := report.BuildMatrix(runs, time.Now())
	if err != nil {
		return usageErr("%v", err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	var written []string
	write := func(name string, render func(*bytes.Buffer) error) error {
		var buf bytes.Buffer
		if err := render(&buf); err != nil {
			return err
		}
		path := filepath.Join(out, name)
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			return err
		}
		written = append(written, path)
		return nil
	}
	if want["html"] {
		if err := write(matrixHTML, func(b *bytes.Buffer) error { return report.WriteMatrixHTML(b, m) }); err != nil {
			return err
		}
	}
	if want["md"] {
		if err := write(matrixMarkdown, func(b *bytes.Buffer) error { return report.WriteMatrixMarkdown(b, m) }); err != nil {
			return err
		}
	}
	if want["json"] {
		if err := write(matrixJSON, func(b *bytes.Buffer) error { return report.WriteMatrixJSON(b, m) }); err != nil {
			return err
		}
	}
	differ, total := m.DifferingRules()
	var labels []string
	for _, c := range m.Columns {
		labels = append(labels, c.Label)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "Matrix of %d runs (%s): %d of %d rules differ between them\n", len(m.Columns), strings.Join(labels, ", "), differ, total)
	fmt.Fprintf(cmd.OutOrStdout(), "Wrote %s\n", strings.Join(written, ", "))
	return nil
}

// readPublishedRun reads one run's published documents: DIR/conformance-report.yaml and
// DIR/report.json.
func readPublishedRun(dir string) (report.MatrixRun, error) {
	run := report.MatrixRun{Source: dir}
	path := filepath.Join(dir, report.FilePublished)
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		if _, jerr := os.Stat(filepath.Join(dir, report.FileJSON)); jerr == nil {
			return run, fmt.Errorf("%s has a report but no %s: publish it first with conform report --publish %s", dir, report.FilePublished, dir)
		}
		return run, fmt.Errorf("%s holds no published run (no %s; conform report --publish DIR writes it beside report.json)", dir, report.FilePublished)
	}
	if err != nil {
		return run, err
	}
	if err := yaml.Unmarshal(data, &run.Published); err != nil {
		return run, fmt.Errorf("%s: %v", path, err)
	}
	if run.Published.APIVersion != report.PublishedSchema {
		return run, fmt.Errorf("%s: schema %q, want %q", path, run.Published.APIVersion, report.PublishedSchema)
	}
	run.Report, err = report.ReadJSON(filepath.Join(dir, report.FileJSON))
	if err != nil {
		return run, fmt.Errorf("%s: %v", dir, err)
	}
	return run, nil
}
