package main

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// foreignFlags are the flags the README gives to other programs, with the program.
var foreignFlags = map[string]string{
	"--rm": "docker run", "--network": "docker run",
	"--iptables": "dockerd", "--ip-forward": "dockerd", "--ip": "dockerd",
	"--tool": "valgrind",
}

// commandFlags maps each conform subcommand (by name) to its flags, and "" to every flag
// of any command.
func commandFlags() map[string]map[string]bool {
	out := map[string]map[string]bool{"": {"--help": true, "--version": true}}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		set := map[string]bool{"--help": true}
		c.Flags().VisitAll(func(f *pflag.Flag) { set["--"+f.Name] = true; out[""]["--"+f.Name] = true })
		out[c.Name()] = set
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(rootCmd())
	return out
}

var (
	flagToken    = regexp.MustCompile(`--[a-z][a-z0-9-]*`)
	conformUsage = regexp.MustCompile(`\bconform ([a-z][a-z-]*)\b([^\x60|]*)`)
)

// Every flag the README mentions exists: on the subcommand it follows ("conform run
// --backend ..."), else on some command of conform, else it is another program's, named
// in foreignFlags (issue 24, found 10).
func TestEveryFlagTheReadmeMentionsExists(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	flags := commandFlags()
	checked := 0
	for _, line := range strings.Split(string(readme), "\n") {
		for _, m := range conformUsage.FindAllStringSubmatch(line, -1) {
			sub, rest := m[1], m[2]
			own, ok := flags[sub]
			if !ok {
				continue // "conform run" in prose is a command; a word after "conform" may not be
			}
			if i := strings.Index(rest, "#"); i >= 0 {
				rest = rest[:i]
			}
			for _, f := range flagToken.FindAllString(rest, -1) {
				checked++
				if !own[f] && foreignFlags[f] == "" {
					t.Errorf("README: conform %s has no flag %s: %q", sub, f, strings.TrimSpace(line))
				}
			}
		}
		for _, f := range flagToken.FindAllString(line, -1) {
			checked++
			if !flags[""][f] && foreignFlags[f] == "" {
				t.Errorf("README mentions %s, which no conform command has: %q", f, strings.TrimSpace(line))
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d flags checked: the README's commands were not found", checked)
	}
}

// conform run's help names what the README promises: env: references, the +sdk suffix,
// CONFORM_ALLOW_ACCOUNT_CHANGES, --parallel; conform list can filter.
func TestHelpNamesWhatTheReadmePromises(t *testing.T) {
	help := func(args ...string) string {
		root := rootCmd()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetArgs(append(args, "--help"))
		if err := root.Execute(); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	run := help("run")
	for _, want := range []string{"NAME=env:VARIABLE", "+sdk", "CONFORM_ALLOW_ACCOUNT_CHANGES=1", "--parallel", "--parallel-backends", "130"} {
		if !strings.Contains(run, want) {
			t.Errorf("conform run --help does not mention %q", want)
		}
	}
	if list := help("list"); !strings.Contains(list, "--label-filter") {
		t.Error("conform list --help has no --label-filter")
	}
}

// A failure line ends with what it announces, never at a dangling "expects:".
func TestFailureLineCarriesWhatItAnnounces(t *testing.T) {
	msg := "entity (\"p\",\"r\") of table t differs from what the rule expects:\n  property x: 1, want 2\n  property y: missing"
	got := failureLine(msg)
	if strings.HasSuffix(got, ":") || !strings.Contains(got, "property x: 1, want 2") {
		t.Errorf("failureLine = %q", got)
	}
	if got := failureLine("Expected\n    <int>: 2\nto equal\n    <int>: 1\nmore"); got != "2, expected 1" {
		t.Errorf("failureLine of Gomega's message = %q", got)
	}
	if got := failureLine("Get Entity after Update and Merge\nthe entity that came back differs from what was stored:\n  property W: want Edm.Boolean(true), got Edm.Int32(1)"); got != "Get Entity after Update and Merge the entity that came back differs from what was stored: property W: want Edm.Boolean(true), got Edm.Int32(1)" {
		t.Errorf("failureLine of a step before its failure = %q", got)
	}
	if got := failureLine("the refusal's Preference-Applied\nExpected\n    <string>: \nto equal\n    <string>: return-no-content\nmore"); got != "the refusal's Preference-Applied: (empty), expected return-no-content" {
		t.Errorf("failureLine of Gomega's message after its step = %q", got)
	}
	// Gomega's blocks in words (issue 34, item 6), with the exact messages users saw.
	if got := failureLine("status: <?xml version=\"1.0\"?>\n<Error>\n  <Code>AuthorizationFailure</Code>\n</Error>\nExpected\n    <int>: 403\nto equal\n    <int>: 401"); got != "status 403, expected 401" {
		t.Errorf("failureLine of a status check = %q", got)
	}
	if got := failureLine("Unexpected error:\n    <*driver.TransportError | 0x3813672a4f60>: \n    transport error: GET /cfx(): read tcp: connection reset by peer\n    {Op: \"GET /cfx()\", Err: <*net.OpError | 0x1>{}}\noccurred"); got != "transport error: GET /cfx(): read tcp: connection reset by peer" {
		t.Errorf("failureLine of an unexpected transport error = %q", got)
	}
	if got := failureLine("Get Entity after Update\nstatus\nExpected\n    <int>: 404\nto equal\n    <int>: 200"); got != "Get Entity after Update status 404, expected 200" {
		t.Errorf("failureLine of a step before a status check = %q", got)
	}
	if got := failureLine("expected 409, but it answered 400\nmore"); got != "expected 409, but it answered 400" {
		t.Errorf("failureLine of a one-line failure = %q", got)
	}
}
