package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// Commit is the commit conform was built from: set with -ldflags "-X main.Commit=...", else
// taken from the build information.
var Commit = ""

// unknown stands for a version or commit the build did not record.
const unknown = "unknown"

func init() {
	Version, Commit = resolveVersion(Version, Commit, readBuildInfo())
	extraCommands = append(extraCommands, versionCmd)
}

func readBuildInfo() *debug.BuildInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return nil
	}
	return bi
}

// resolveVersion fills what -ldflags left empty from the build information: the module
// version (v1.2.3 after `go install ...@v1.2.3`; a pseudo-version or "(devel)" in a
// checkout) and the VCS revision `go build` records in a git checkout, or the commit a
// pseudo-version names.
func resolveVersion(version, commit string, bi *debug.BuildInfo) (string, string) {
	if bi != nil {
		if version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			version = bi.Main.Version
		}
		if commit == "" {
			commit = revision(bi)
		}
		if commit == "" {
			commit = pseudoVersionCommit(bi.Main.Version)
		}
	}
	if version == "" {
		version = "devel"
	}
	if commit == "" {
		commit = unknown
	}
	return version, commit
}

func revision(bi *debug.BuildInfo) string {
	var rev string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev != "" && dirty {
		rev += "-dirty"
	}
	return rev
}

// pseudoVersionCommit returns the 12-hex-digit commit prefix that ends a pseudo-version
// (v0.0.0-20240102150405-abcdef123456, possibly +incompatible or +dirty), or "".
func pseudoVersionCommit(v string) string {
	v, _, _ = strings.Cut(v, "+")
	i := strings.LastIndexByte(v, '-')
	if i < 0 || strings.Count(v, "-") < 2 {
		return ""
	}
	c := v[i+1:]
	if len(c) != 12 || strings.Trim(c, "0123456789abcdef") != "" {
		return ""
	}
	return c
}

func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print conform's version, the commit it was built from and the Go version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintf(cmd.OutOrStdout(), "conform %s\ncommit %s\ngo %s %s/%s\n",
				Version, Commit, strings.TrimPrefix(runtime.Version(), "go"), runtime.GOOS, runtime.GOARCH)
		},
	}
}
