package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/onsi/ginkgo/v2/types"
	"github.com/spf13/cobra"

	"github.com/tableconform/conform/reference/spec"
)

type listedRule struct {
	ID      string `json:"id"`
	Level   string `json:"level"`
	Area    string `json:"area"`
	Feature string `json:"feature"`
	Source  string `json:"source"`
	Text    string `json:"text"`
}

func listCmd() *cobra.Command {
	var format, filter string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Print the rule catalogue: id, level, area, source",
		Long: `Print the rule catalogue: id, level, area, source (and, with --format json, feature and
text). --label-filter selects rules as conform run selects their specs, e.g.
'area:query && level:MUST'.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var lf func([]string) bool
			if filter != "" {
				var err error
				if lf, err = types.ParseLabelFilter(filter); err != nil {
					return usageErr("--label-filter %q is not a valid label expression: %s", filter, firstLine(ansi.ReplaceAllString(err.Error(), "")))
				}
			}
			var out []listedRule
			for _, r := range spec.Rules() {
				if lf != nil && !lf(ruleLabels(r, "")) {
					continue
				}
				out = append(out, listedRule{ID: r.ID, Level: string(r.Level), Area: string(r.Area), Feature: string(r.FeatureOrCore()), Source: r.Source, Text: r.Text})
			}
			switch format {
			case "json":
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(out)
			case "text":
				w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, "ID\tLEVEL\tAREA\tSOURCE")
				for _, r := range out {
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", r.ID, r.Level, r.Area, r.Source)
				}
				return w.Flush()
			}
			return usageErr("--format must be text or json, not %q", format)
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json")
	cmd.Flags().StringVar(&filter, "label-filter", "", "only the rules this Ginkgo label expression selects, e.g. 'area:query && level:MUST'")
	return cmd
}
