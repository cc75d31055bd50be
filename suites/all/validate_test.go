package all

import (
	"strings"
	"testing"
)

// TestValidateReadsTheStartedForms: the backends conform starts from a description are
// checked as Open reads them, with or without the SDK suffix, before anything starts.
func TestValidateReadsTheStartedForms(t *testing.T) {
	for _, ok := range []string{
		"azurite@3.29.0", "azurite@3.29.0" + SDKSuffix,
		"dev=exec:conform serve --addr 127.0.0.1:{port}", "dev" + SDKSuffix + "=exec:conform serve --addr 127.0.0.1:{port}",
		"own=image:conform:local,args=serve --addr 0.0.0.0:10002",
	} {
		if err := Validate(ok); err != nil {
			t.Errorf("Validate(%q): %v", ok, err)
		}
	}
	for target, want := range map[string]string{
		"azurite@next":            "not an Azurite 3.x release",
		"dev=exec:conform serve":  "{port}",
		"own=image:x,port=100000": "not a TCP port",
		// Issue 37: the model runs in process, as the reference does; the SDK cannot reach it.
		"reference" + SDKSuffix: "no HTTP endpoint for the SDK",
		"model" + SDKSuffix:     "no HTTP endpoint for the SDK",
	} {
		if err := Validate(target); err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Validate(%q): %v, want one line saying %q", target, err, want)
		}
	}
}
