package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/framework"
)

// keptShown is how many kept tables --keep-failed lists per backend.
const keptShown = 20

// keptPath is where a backend process of --keep-failed writes the names of the tables it
// left, beside its raw result.
func keptPath(rawPath string) string { return strings.TrimSuffix(rawPath, ".json") + ".kept.json" }

// writeKept lists the tables this process left on b (its own prefix, conform's exact
// pattern: those of failed specs, and any whose delete failed) into path.
func writeKept(path string, b api.Backend) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	names, err := tablesWithPrefix(ctx, b, framework.ProcessTablePrefix())
	if err == nil {
		var data []byte
		if data, err = json.Marshal(names); err == nil {
			err = os.WriteFile(path, data, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "conform: list the tables kept for --keep-failed: %v\n", err)
	}
}

// keptTables reads the tables every process of the backend named name left (its parts,
// its account-wide process and its retries), sorted.
func keptTables(rawDir, name string) []string {
	safe := sanitizeName(name)
	var files []string
	for _, dir := range []string{rawDir, filepath.Join(rawDir, "retry*")} {
		for _, pattern := range []string{safe + ".kept.json", safe + ".part*.kept.json", safe + ".account.kept.json"} {
			found, _ := filepath.Glob(filepath.Join(dir, pattern))
			files = append(files, found...)
		}
	}
	var names []string
	for _, f := range files {
		var part []string
		if data, err := os.ReadFile(f); err == nil && json.Unmarshal(data, &part) == nil {
			names = append(names, part...)
		}
	}
	sort.Strings(names)
	return names
}

// printKeptTables says, per backend, which tables --keep-failed kept (the first keptShown,
// then how many more) and how to remove them: conform clean on an endpoint; a backend
// conform started itself took them with it when it stopped.
func printKeptTables(w io.Writer, backends []string, rawDir, prefix string) {
	for _, b := range backends {
		name := framework.BackendName(b)
		kept := keptTables(rawDir, name)
		if len(kept) == 0 {
			continue
		}
		shown := kept
		more := ""
		if len(kept) > keptShown {
			shown = kept[:keptShown]
			more = fmt.Sprintf(" and %d more", len(kept)-keptShown)
		}
		fmt.Fprintf(w, "%-16s kept %s for --keep-failed: %s%s\n", name, counted(len(kept), "table"), strings.Join(shown, ", "), more)
		if !strings.Contains(b, "=") {
			fmt.Fprintf(w, "%-16s they went with %s, which conform started and stopped; run against an endpoint (conform serve, NAME=env:VARIABLE) to inspect them\n", "", name)
			continue
		}
		arg := reusableArgument(b)
		if arg == "" {
			arg = name + "='<connection string>'"
		}
		fmt.Fprintf(w, "%-16s conform clean --backend %s --prefix %s removes them\n", "", arg, prefix)
	}
}
