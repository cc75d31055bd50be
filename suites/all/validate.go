package all

import (
	"fmt"
	"os"
	"strings"

	"github.com/tableconform/conform/reference/wire"
	"github.com/tableconform/conform/suites/driver/mutant"
	"github.com/tableconform/conform/suites/provision"
)

// Validate checks a backend argument as Open reads it, without starting or reaching
// anything: a built-in name (with or without SDKSuffix), "mutant:NAME[@BASE]" with a known
// mutant, or NAME=CONNECTION_STRING (or NAME=env:VARIABLE) with a well-formed connection
// string. Its error is one
// line and never holds a key or signature.
func Validate(target string) error {
	if m, base, ok, err := mutant.ParseTarget(target); ok {
		if err != nil {
			return err
		}
		if base != "" && base != m.BaseOrDefault() {
			return Validate(base)
		}
		return nil
	}
	name, conn, hasConn := strings.Cut(target, "=")
	base, sdk := strings.CutSuffix(name, SDKSuffix)
	form := base
	if hasConn {
		form = base + "=" + conn
	}
	if ok, err := provision.ValidateForm(form); ok {
		if err != nil {
			return fmt.Errorf("backend %s: %v", name, err)
		}
		return nil
	}
	if strings.TrimSpace(base) == "" {
		return fmt.Errorf("backend %q has no name", name)
	}
	if hasConn {
		if variable, ok := strings.CutPrefix(conn, provision.EnvPrefix); ok {
			conn = strings.TrimSpace(os.Getenv(variable))
			if conn == "" {
				return fmt.Errorf("backend %s: the environment variable %s that should hold the connection string is empty or unset", name, variable)
			}
		}
		if _, err := wire.ParseConnectionString(conn); err != nil {
			return fmt.Errorf("backend %s: malformed connection string: %v", name, err)
		}
		return nil
	}
	if sdk && (base == provision.Reference || base == provision.Model) {
		return fmt.Errorf("backend %s: %s runs in process and has no HTTP endpoint for the SDK; use %s%s", name, base, provision.ReferenceHTTP, SDKSuffix)
	}
	var known []string
	for _, n := range provision.Names() {
		if !strings.Contains(n.Name, "=") {
			if n.Name == base {
				return nil
			}
			known = append(known, n.Name)
		}
	}
	return fmt.Errorf("unknown backend %q (want one of %s, %sNAME, or NAME=CONNECTION_STRING)", name, strings.Join(known, ", "), mutant.Prefix)
}
