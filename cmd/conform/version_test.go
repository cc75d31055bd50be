package main

import (
	"runtime/debug"
	"testing"
)

func TestResolveVersion(t *testing.T) {
	settings := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	for _, c := range []struct {
		name                    string
		version, commit         string
		bi                      *debug.BuildInfo
		wantVersion, wantCommit string
	}{
		{"ldflags win", "v1.0.0", "abc", &debug.BuildInfo{Main: debug.Module{Version: "v2.0.0"}, Settings: settings("vcs.revision", "def")}, "v1.0.0", "abc"},
		{"go install of a tag", "", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.1.0"}}, "v0.1.0", unknown},
		{"go install of a commit", "", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.1.1-0.20261126083000-0123456789ab"}}, "v0.1.1-0.20261126083000-0123456789ab", "0123456789ab"},
		{"go build in a checkout", "", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: settings("vcs.revision", "fedcba", "vcs.modified", "true")}, "devel", "fedcba-dirty"},
		{"no build info", "", "", nil, "devel", unknown},
	} {
		v, cm := resolveVersion(c.version, c.commit, c.bi)
		if v != c.wantVersion || cm != c.wantCommit {
			t.Errorf("%s: got %s %s, want %s %s", c.name, v, cm, c.wantVersion, c.wantCommit)
		}
	}
}
