package main

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// secretQuotes find where conform's output could quote a signature: the MAC signature of
// an AuthenticationErrorDetail and the signature of a Shared Key Authorization header.
var secretQuotes = regexp.MustCompile(`signature found in the HTTP request '([^']*)'|SharedKey(?:Lite)? [^\s:]+:([^\s"'&<]+)`)

// Issue 34 item 11: a wrong AccountKey against conform serve (which answers 403
// AuthenticationFailed quoting the request's signature, as Azure does) says to check the
// key, and no signature reaches the terminal or any file the run writes.
func TestWrongKeyIsNamedAndNoSignatureIsWritten(t *testing.T) {
	conn, _ := startServe(t)
	wrongKey := base64.StdEncoding.EncodeToString([]byte("not the development account's key"))
	wrong := regexp.MustCompile(`AccountKey=[^;]+`).ReplaceAllString(conn, "AccountKey="+wrongKey)
	t.Setenv("CONFORM_TEST_WRONG_KEY", wrong)
	for _, backend := range []string{"wrong=env:CONFORM_TEST_WRONG_KEY", "wrong+sdk=env:CONFORM_TEST_WRONG_KEY"} {
		dir := filepath.Join(t.TempDir(), "report")
		stdout, stderr, code := conform(t, "run", "--backend", backend, "--label-filter", "tables.create.listed", "--no-corpus", "--out", dir)
		if code != exitUsage {
			t.Errorf("%s: exit %d, want %d", backend, code, exitUsage)
		}
		if !strings.Contains(stderr, "authentication failed: check the AccountKey (or SAS) of the connection string") {
			t.Errorf("%s: the terminal does not say to check the key:\n%s", backend, stderr)
		}
		outputs := map[string]string{"stdout": stdout, "stderr": stderr}
		err := filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
			if err != nil || fi.IsDir() {
				return err
			}
			data, err := os.ReadFile(path)
			outputs[path] = string(data)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		quoted := 0
		for where, text := range outputs {
			for _, m := range secretQuotes.FindAllStringSubmatch(text, -1) {
				quoted++
				if sig := m[1] + m[2]; sig != "***" {
					t.Errorf("%s: %s shows the signature %q", backend, where, sig)
				}
			}
		}
		if quoted == 0 {
			t.Errorf("%s: no output quotes the server's MAC detail, so nothing shows the masking:\n%s", backend, stderr)
		}
	}
}
