package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/tableconform/conform/suites/report"
)

type publishOptions struct {
	publish                bool
	backend, name, version string
}

// runPublish is `conform report --publish DIR`: it derives the published document of one
// backend of DIR's report (report.Publish) and writes it beside the report.
func runPublish(cmd *cobra.Command, args []string, o publishOptions) error {
	if len(args) != 1 {
		return usageErr("--publish takes one report directory; got %d", len(args))
	}
	dir := args[0]
	r, err := readReport(dir)
	if err != nil {
		return usageErr("%v", err)
	}
	bi := -1
	var names []string
	for i, b := range r.Backends {
		names = append(names, b.Name)
		if b.Name == o.backend || (o.backend == "" && len(r.Backends) == 1) {
			bi = i
		}
	}
	switch {
	case bi < 0 && o.backend == "":
		return usageErr("--publish: the report has %d backends (%s); choose one with --backend", len(names), strings.Join(names, ", "))
	case bi < 0:
		return usageErr("--publish: the report has no backend %q (it has %s)", o.backend, strings.Join(names, ", "))
	case r.Backends[bi].StartError != "":
		return usageErr("--publish: %s was not run: %s", r.Backends[bi].Name, r.Backends[bi].StartError)
	}
	published := report.Publish(r, bi, o.name, o.version)
	data, err := encodePublished(published)
	if err != nil {
		return err
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		dir = filepath.Dir(dir) // a report.json named directly
	}
	path := filepath.Join(dir, report.FilePublished)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "Wrote %s (%s %s, %s)\n", path, report.PublishedSchema, r.Backends[bi].Name, r.Backends[bi].Verdict)
	if published.Implementation.Version == "" {
		fmt.Fprintf(cmd.ErrOrStderr(), "conform: warning: %s has no version (the backend reported none); give it with --implementation-version\n", path)
	}
	return nil
}

// encodePublished writes the document as YAML, two-space indented, with a comment naming
// its schema.
func encodePublished(p report.Published) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("# conform's published conformance report; schema: docs/CONFORMANCE-REPORT.md\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
