package main

import (
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/tableconform/conform/suites/report"
)

func reportCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "report DIR...",
		Short: "Merge the reports of earlier runs into one comparison",
		Long: `Merge report.json files of earlier runs (for instance one made in CI against a real
account) into one report with every backend side by side. A backend named in several
reports keeps its last column.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, dirs []string) error {
			var reps []report.Report
			for _, d := range dirs {
				r, err := report.ReadJSON(filepath.Join(d, report.FileJSON))
				if err != nil {
					return usageErr("%v", err)
				}
				reps = append(reps, r)
			}
			merged := report.Merge(reps...)
			merged.Generated = time.Now().UTC()
			merged.Command = "conform report " + joinArgs(dirs)
			if err := report.WriteDir(out, merged); err != nil {
				return err
			}
			printSummary(cmd.OutOrStdout(), merged, out)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "conform-report-merged", "directory to write the merged report into")
	return cmd
}

func joinArgs(args []string) string {
	s := ""
	for i, a := range args {
		if i > 0 {
			s += " "
		}
		s += a
	}
	return s
}
