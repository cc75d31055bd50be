package main

import (
	"encoding/base64"
	"fmt"
	"os"
	"strings"

	"github.com/tableconform/conform/suites/provision"
)

// filePrefix marks a key given by the file that holds it (--account NAME:file:PATH).
const filePrefix = "file:"

// serveAccount is an extra account of conform serve: its name, its key, and how the
// printed connection string shows the key: as given on the command line, or, where it
// came from a variable or a file, by where it came from, never the key itself.
type serveAccount struct {
	name  string
	key   []byte
	shown string
}

// parseServeAccount reads --account NAME:BASE64KEY, NAME:env:VARIABLE or NAME:file:PATH
// (the variable or file holding the base64 key). Its errors never show the key.
func parseServeAccount(arg string) (serveAccount, error) {
	const want = "--account wants NAME:BASE64KEY, NAME:env:VARIABLE or NAME:file:PATH, NAME 3 to 24 lower-case letters and digits (the key is not printed)"
	name, key, ok := strings.Cut(arg, ":")
	if !ok || !validAccountName(name) {
		return serveAccount{}, usageErr("%s", want)
	}
	a := serveAccount{name: name, shown: key}
	if variable, ok := strings.CutPrefix(key, provision.EnvPrefix); ok {
		key = strings.TrimSpace(os.Getenv(variable))
		a.shown = "<from " + provision.EnvPrefix + variable + ">"
		if key == "" {
			return a, usageErr("--account %s: the environment variable %s that should hold its key is empty or unset", name, variable)
		}
	} else if path, ok := strings.CutPrefix(key, filePrefix); ok {
		data, err := os.ReadFile(path)
		if err != nil {
			return a, usageErr("--account %s: read its key: %v", name, err)
		}
		key = strings.TrimSpace(string(data))
		a.shown = "<from " + filePrefix + path + ">"
	}
	decoded, err := base64.StdEncoding.DecodeString(key)
	if err != nil || len(decoded) == 0 {
		if a.shown != key {
			return a, usageErr("--account %s: the key in %s is not base64 (the key is not printed)", name, strings.Trim(a.shown, "<>"))
		}
		return a, usageErr("%s", want)
	}
	a.key = decoded
	return a, nil
}

// connectionString is the account's connection string on the server at base (scheme://host:port).
func (a serveAccount) connectionString(scheme, base string) string {
	return fmt.Sprintf("DefaultEndpointsProtocol=%s;AccountName=%s;AccountKey=%s;TableEndpoint=%s/%s;", scheme, a.name, a.shown, base, a.name)
}
