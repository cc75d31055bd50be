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
	// Cosmos is what Cosmos DB for Table does about the rule (spec.Cosmos).
	Cosmos spec.Cosmos `json:"cosmos"`
}

func listCmd() *cobra.Command {
	var format, filter, profile string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Print the rule catalogue: id, level, area, what Cosmos DB does, source",
		Long: `Print the rule catalogue: id, level, area, what Cosmos DB for Table does about the rule
(same as Storage; differs: the answer Cosmos is recorded or documented to give; unsupported:
Cosmos refuses the feature; order-unpromised: Cosmos promises no order of results, the rest
of the rule holds; unpromised: Cosmos promises nothing there), and source (and,
with --format json, feature and text).

--label-filter selects rules as conform run selects their specs, e.g.
'area:query && level:MUST'; as with conform run, a filter that selects nothing is a usage
error (exit 2). With --profile cosmos only the rules where Cosmos DB does not answer as
Storage are listed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if profile != "" && profile != "storage" && profile != "cosmos" {
				return usageErr("--profile must be storage or cosmos, not %q", profile)
			}
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
				if profile == "cosmos" && r.Cosmos.KindOrSame() == spec.CosmosSame {
					continue
				}
				out = append(out, listedRule{ID: r.ID, Level: string(r.Level), Area: string(r.Area), Feature: string(r.FeatureOrCore()),
					Source: r.Source, Text: r.Text, Cosmos: r.Cosmos})
			}
			if len(out) == 0 {
				return usageErr("--label-filter %q selects no rule", filter)
			}
			switch format {
			case "json":
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(out)
			case "text":
				w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, "ID\tLEVEL\tAREA\tCOSMOS\tSOURCE")
				for _, r := range out {
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", r.ID, r.Level, r.Area, r.Cosmos.Summary(), r.Source)
				}
				return w.Flush()
			}
			return usageErr("--format must be text or json, not %q", format)
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json")
	cmd.Flags().StringVar(&filter, "label-filter", "", "only the rules this Ginkgo label expression selects, e.g. 'area:query && level:MUST'")
	cmd.Flags().StringVar(&profile, "profile", "", "cosmos: only the rules where Cosmos DB for Table does not answer as Storage")
	return cmd
}
