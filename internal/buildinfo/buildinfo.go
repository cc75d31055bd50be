package buildinfo

import (
	"runtime/debug"
	"strings"
	"sync"
)

// Set by the linker: -X github.com/tableconform/conform/internal/buildinfo.version=... and
// .commit=... (the Makefile's LDFLAGS); empty otherwise.
var version, commit string

// Unknown stands for a commit the build did not record.
const Unknown = "unknown"

// Info is a build's version and commit.
type Info struct {
	// Version is a tag (v1.2.3), a pseudo-version, what `git describe` said, or "devel".
	Version string
	// Commit is the commit built from, with "-dirty" when the work tree had changes, or
	// Unknown.
	Commit string
}

// Current is the running build's Info.
var Current = sync.OnceValue(func() Info {
	bi, _ := debug.ReadBuildInfo()
	return Resolve(version, commit, bi)
})

// Resolve fills what the linker left empty from the build information bi (nil when there
// is none): the module version (v1.2.3 after `go install ...@v1.2.3`; "(devel)" in a
// checkout, which is "devel" here) and the commit, from vcs.revision and vcs.modified or
// from the commit a pseudo-version names.
func Resolve(version, commit string, bi *debug.BuildInfo) Info {
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
		commit = Unknown
	}
	return Info{Version: version, Commit: commit}
}

// String is the build in one line, as reports show it: the version, and the commit (12
// hex digits, "-dirty" kept) when it is known and the version does not already name it:
// "v0.2.0", "v0.1.0-3-g59e8ef3-dirty", "devel (commit 59e8ef3a1b2c-dirty)".
func (i Info) String() string {
	if i.Commit == "" || i.Commit == Unknown {
		return i.Version
	}
	hash, dirty := strings.CutSuffix(i.Commit, "-dirty")
	short := hash[:min(12, len(hash))]
	if strings.Contains(i.Version, short[:min(7, len(short))]) {
		return i.Version
	}
	if dirty {
		short += "-dirty"
	}
	return i.Version + " (commit " + short + ")"
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
