package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/tableconform/conform/suites/all"
	"github.com/tableconform/conform/suites/driver/mutant"
	"github.com/tableconform/conform/suites/framework"
	"github.com/tableconform/conform/suites/provision"
)

// The expectation profiles of --profile.
const (
	profileStorage = "storage"
	profileCosmos  = "cosmos"
)

// cosmosFlavoured reports whether the backend argument answers as Cosmos DB for Table:
// reference-cosmos (through either driver) or a mutant built on it. An endpoint given by
// connection string is not told apart: its profile is the one --profile names.
func cosmosFlavoured(arg string) bool {
	if _, base, ok, err := mutant.ParseTarget(arg); ok {
		return err == nil && cosmosFlavoured(base)
	}
	name, _, hasConn := strings.Cut(arg, "=")
	if hasConn {
		return false
	}
	return strings.TrimSuffix(name, all.SDKSuffix) == provision.ReferenceCosmos
}

// backendProfile is the profile a backend is judged under: the one --profile names
// (explicit), else cosmos for a Cosmos-flavoured backend, else storage ("", the default).
// The profile follows the backend so that reference-cosmos alone is judged as what it is.
func backendProfile(arg, explicit string) string {
	if explicit == "" && cosmosFlavoured(arg) {
		return profileCosmos
	}
	return explicit
}

// printProfiles says, one line per Cosmos-flavoured backend, which profile judges it: the
// cosmos profile that follows it, or, when --profile storage was given, why its specs of
// Cosmos's documented differences will fail.
func printProfiles(w io.Writer, backends []string, explicit string) {
	for _, b := range backends {
		if !cosmosFlavoured(b) {
			continue
		}
		name := framework.BackendName(b)
		switch explicit {
		case "":
			fmt.Fprintf(w, "[%s] profile cosmos (follows %s; --profile storage judges it as Azure Storage)\n", name, name)
		case profileStorage:
			fmt.Fprintf(w, "conform: %s answers as Cosmos DB for Table but --profile storage judges it as Azure Storage: the specs of Cosmos's documented differences will fail (drop --profile, or give --profile cosmos)\n", name)
		}
	}
}
