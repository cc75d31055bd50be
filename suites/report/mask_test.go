package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The report writers are the last safety net: a start error that quotes a signature (a
// driver that did not mask it) reaches no report file.
func TestWriteDirMasksSignatures(t *testing.T) {
	const sig = "ZkYNXnEbLk4OE/VcJJuCIUbBveN8CUsdIjL2bEmzI6E="
	r := Report{Schema: Schema, Backends: []Backend{{StartError: "403 AuthenticationFailed | The MAC signature found in the HTTP request '" + sig + "' is not the same as any computed signature. Authorization: SharedKey acct:" + sig}}}
	dir := t.TempDir()
	if err := WriteDir(dir, r); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{FileJSON, FileMarkdown, FileHTML, FileJUnit} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), sig[:16]) {
			t.Errorf("%s shows the signature", name)
		}
	}
	if !strings.Contains(r.Backends[0].StartError, sig) {
		t.Error("WriteDir changed the report it was given")
	}
}
