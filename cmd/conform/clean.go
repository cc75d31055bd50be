package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/all"
	"github.com/tableconform/conform/suites/framework"
)

func cleanCmd() *cobra.Command {
	var backend, prefix string
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "clean --backend NAME=env:VARIABLE [--prefix cf...]",
		Short: "Delete tables left behind by crashed runs (only names of conform's exact pattern, cf + run id + p<n>t<n>)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if backend == "" {
				return usageErr("clean needs --backend")
			}
			if !strings.HasPrefix(prefix, framework.TablePrefix) {
				return usageErr("--prefix must start with %q: conform deletes only tables it created", framework.TablePrefix)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			t, err := all.Open(ctx, backend)
			if err != nil {
				return usageErr("backend %s cannot be started or reached: %v", framework.BackendName(backend), err)
			}
			defer t.Close()
			names, err := tablesWithPrefix(ctx, t.Backend, prefix)
			if err != nil {
				return usageErr("list tables of %s: %v", framework.BackendName(backend), err)
			}
			deleted := 0
			for _, n := range names {
				if dryRun {
					fmt.Fprintf(cmd.OutOrStdout(), "would delete %s\n", n)
					continue
				}
				if err := t.Backend.DeleteTable(ctx, n); err != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "delete %s: %v\n", n, err)
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "deleted %s\n", n)
				deleted++
			}
			fmt.Fprintln(cmd.OutOrStdout(), cleanSummary(prefix, len(names), deleted, dryRun))
			return nil
		},
	}
	cmd.Flags().StringVar(&backend, "backend", "", "backend to clean: a name, NAME=env:VARIABLE (the connection string read from the environment) or NAME=CONNECTION_STRING")
	cmd.Flags().StringVar(&prefix, "prefix", framework.TablePrefix, "table name prefix (must start with \"cf\")")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "list what would be deleted")
	return cmd
}

// cleanSummary is clean's last line: what it deleted of the tables it found, so that the
// count never reads as tables that remain (issue 34, item 10: "13 tables with prefix "cf""
// after deleting them).
func cleanSummary(prefix string, found, deleted int, dryRun bool) string {
	tables := func(n int) string {
		if n == 1 {
			return "1 table"
		}
		return fmt.Sprintf("%d tables", n)
	}
	switch {
	case found == 0:
		return fmt.Sprintf("no table of conform's with prefix %q: nothing to delete", prefix)
	case dryRun:
		return fmt.Sprintf("--dry-run: %s with prefix %q would be deleted; none was", tables(found), prefix)
	case deleted == found:
		return fmt.Sprintf("deleted %s with prefix %q, all that were found", tables(found), prefix)
	}
	return fmt.Sprintf("deleted %d of %s with prefix %q; %d could not be deleted (said above) and are left", deleted, tables(found), prefix, found-deleted)
}

// tablesWithPrefix lists conform's own tables whose names start with prefix: it asks the
// service for that range only, and returns only names that match the exact pattern of
// conform's tables (framework.RunTablePattern), so that a user's table that merely starts
// with "cf" (cfusers) is never deleted.
func tablesWithPrefix(ctx context.Context, b api.Backend, prefix string) ([]string, error) {
	upper := prefix[:len(prefix)-1] + string(prefix[len(prefix)-1]+1)
	q := api.TableQuery{Filter: fmt.Sprintf("TableName ge '%s' and TableName lt '%s'", prefix, upper)}
	var out []string
	for {
		var p api.TablePage
		err := framework.RetrySetup(ctx, func(ctx context.Context) error {
			var err error
			p, err = b.QueryTables(ctx, q)
			return err
		})
		if err != nil {
			return nil, err
		}
		for _, n := range p.Tables {
			if strings.HasPrefix(n, prefix) && framework.IsRunTable(n) {
				out = append(out, n)
			}
		}
		if p.NextTableName == "" {
			return out, nil
		}
		q.NextTableName = p.NextTableName
	}
}
