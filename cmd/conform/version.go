package main

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tableconform/conform/internal/buildinfo"
)

func init() {
	extraCommands = append(extraCommands, versionCmd)
}

func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print conform's version, the commit it was built from and the Go version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			b := buildinfo.Current()
			fmt.Fprintf(cmd.OutOrStdout(), "conform %s\ncommit %s\ngo %s %s/%s\n",
				b.Version, b.Commit, strings.TrimPrefix(runtime.Version(), "go"), runtime.GOOS, runtime.GOARCH)
		},
	}
}
