package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tableconform/conform/suites/report"
)

func reportCmd() *cobra.Command {
	var (
		out    string
		diff   bool
		format string
		pub    publishOptions
	)
	cmd := &cobra.Command{
		Use:   "report DIR... | report --diff OLD NEW | report --publish DIR",
		Short: "Merge the reports of earlier runs into one comparison, or list what changed between two",
		Long: `Merge report.json files of earlier runs (for instance one made in CI against a real
account) into one report with every backend side by side. A backend named in several
reports keeps its last column.

With --diff OLD NEW (each a report directory or a report.json), list per backend the rules
that got worse, got better, changed their recorded choice, changed only in what the
baseline expects (the backend did the same), or cannot be compared (an outcome that judged
nothing, a rule in only one report; more than a few for one reason are said in one line at
the end), as Markdown or JSON (--format) on standard output. Exit status 1 when any rule got worse, so that a CI job can fail on
regressions alone; 0 otherwise; 2 for unreadable reports.

With --publish DIR, write DIR/conformance-report.yaml: a small, versioned document an
implementation can publish (its name and version, the kind of endpoint, the profile,
conform's version, the verdict, and per area and rule level how many rules passed, failed
and were skipped; schema in docs/CONFORMANCE-REPORT.md). --backend picks the backend of a
report with several; --implementation and --implementation-version replace the name and
the version the backend reported.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if diff {
				return runDiff(cmd, args, format)
			}
			if pub.publish {
				return runPublish(cmd, args, pub)
			}
			var reps []report.Report
			for _, d := range args {
				r, err := readReport(d)
				if err != nil {
					return usageErr("%v", err)
				}
				reps = append(reps, r)
			}
			merged := report.Merge(reps...)
			merged.Generated = time.Now().UTC()
			merged.Command = "conform report " + joinArgs(args)
			if err := report.WriteDir(out, merged); err != nil {
				return err
			}
			printSummary(cmd.OutOrStdout(), merged, out)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "conform-report-merged", "directory to write the merged report into")
	cmd.Flags().BoolVar(&diff, "diff", false, "compare two reports, OLD then NEW, instead of merging")
	cmd.Flags().StringVar(&format, "format", "md", "output of --diff: md or json")
	cmd.Flags().BoolVar(&pub.publish, "publish", false, "write DIR/"+report.FilePublished+", the document to publish about one backend's run")
	cmd.Flags().StringVar(&pub.backend, "backend", "", "with --publish: the backend of the report (needed when it has several)")
	cmd.Flags().StringVar(&pub.name, "implementation", "", "with --publish: the implementation's name (default: the backend's name)")
	cmd.Flags().StringVar(&pub.version, "implementation-version", "", "with --publish: the implementation's version (default: what the backend reported)")
	return cmd
}

// readReport reads a report directory's report.json, or a report.json named directly.
func readReport(path string) (report.Report, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, report.FileJSON)
	}
	return report.ReadJSON(path)
}

func runDiff(cmd *cobra.Command, args []string, format string) error {
	if len(args) != 2 {
		return usageErr("--diff takes two reports, OLD and NEW; got %d", len(args))
	}
	if format != "md" && format != "json" {
		return usageErr("--format %q: want md or json", format)
	}
	old, err := readReport(args[0])
	if err != nil {
		return usageErr("%v", err)
	}
	cur, err := readReport(args[1])
	if err != nil {
		return usageErr("%v", err)
	}
	d := report.Diff(old, cur, args[0], args[1])
	w := cmd.OutOrStdout()
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		err = enc.Encode(d)
	} else {
		err = report.WriteDiffMarkdown(w, d)
	}
	if err != nil {
		return err
	}
	if d.Regressions > 0 {
		var names []string
		for _, b := range d.Backends {
			if len(b.Worse) > 0 {
				names = append(names, fmt.Sprintf("%s (%d)", b.Backend, len(b.Worse)))
			}
		}
		return &exitError{code: exitFailed, msg: fmt.Sprintf("%d rule(s) got worse: %s", d.Regressions, strings.Join(names, ", "))}
	}
	return nil
}

func joinArgs(args []string) string { return strings.Join(args, " ") }
