package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestResolve(t *testing.T) {
	settings := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	for _, c := range []struct {
		name            string
		version, commit string
		bi              *debug.BuildInfo
		want            Info
		says            string
	}{
		{"ldflags win", "v1.0.0", "abc", &debug.BuildInfo{Main: debug.Module{Version: "v2.0.0"}, Settings: settings("vcs.revision", "def")}, Info{"v1.0.0", "abc"}, "v1.0.0 (commit abc)"},
		{"make build: git describe names the commit", "v0.1.0-3-g59e8ef3-dirty", "59e8ef3a1b2c3d4e5f60718293a4b5c6d7e8f901", nil, Info{"v0.1.0-3-g59e8ef3-dirty", "59e8ef3a1b2c3d4e5f60718293a4b5c6d7e8f901"}, "v0.1.0-3-g59e8ef3-dirty"},
		{"go install of a tag", "", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.1.0"}}, Info{"v0.1.0", Unknown}, "v0.1.0"},
		{"go install of a commit", "", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.1.1-0.20261126083000-0123456789ab"}}, Info{"v0.1.1-0.20261126083000-0123456789ab", "0123456789ab"}, "v0.1.1-0.20261126083000-0123456789ab"},
		{"go build in a checkout", "", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: settings("vcs.revision", "fedcba9876543210fedcba9876543210fedcba98", "vcs.modified", "true")}, Info{"devel", "fedcba9876543210fedcba9876543210fedcba98-dirty"}, "devel (commit fedcba987654-dirty)"},
		{"no build info", "", "", nil, Info{"devel", Unknown}, "devel"},
	} {
		got := Resolve(c.version, c.commit, c.bi)
		if got != c.want || got.String() != c.says {
			t.Errorf("%s: got %+v %q, want %+v %q", c.name, got, got.String(), c.want, c.says)
		}
	}
}
