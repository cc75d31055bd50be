package main

import (
	"encoding/json"
	"fmt"
	"os"
	"text/tabwriter"

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
	var format string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Print the rule catalogue: id, level, area, source",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rules := spec.Rules()
			out := make([]listedRule, len(rules))
			for i, r := range rules {
				out[i] = listedRule{ID: r.ID, Level: string(r.Level), Area: string(r.Area), Feature: string(r.FeatureOrCore()), Source: r.Source, Text: r.Text}
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
	_ = os.Stdout
	return cmd
}
