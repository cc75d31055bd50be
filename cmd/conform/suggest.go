package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagSuggestionDistance is how far (in edits) a mistyped flag may be from a flag of its
// command for the error to suggest it.
const flagSuggestionDistance = 2

// flagError is the usage error of a flag cmd cannot parse: pflag's words, the nearest flag
// of cmd when the flag is unknown and one is near enough, and where the flags are listed.
func flagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	if near := nearestFlag(cmd, unknownFlagName(msg)); near != "" {
		msg += "; did you mean --" + near + "?"
	}
	return usageErr("%s (see %s --help)", msg, cmd.CommandPath())
}

// unknownFlagName is the long flag pflag's error msg names as unknown ("unknown flag:
// --backnd"), without its dashes; "" for any other error.
func unknownFlagName(msg string) string {
	name, ok := strings.CutPrefix(msg, "unknown flag: --")
	if !ok {
		return ""
	}
	name, _, _ = strings.Cut(name, "=")
	return strings.TrimSpace(name)
}

// nearestFlag is the flag of cmd (its own and those it inherits) nearest to name, when it
// is at most flagSuggestionDistance edits away; "" otherwise.
func nearestFlag(cmd *cobra.Command, name string) string {
	if name == "" {
		return ""
	}
	best, bestDistance := "", flagSuggestionDistance+1
	visit := func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		if d := editDistance(name, f.Name); d < bestDistance {
			best, bestDistance = f.Name, d
		}
	}
	cmd.LocalFlags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	return best
}

// commandError rewrites cobra's error for an unknown subcommand (several lines, with its
// suggestions) as one line that names the nearest command and where the commands are
// listed; any other error is returned as it is.
func commandError(root *cobra.Command, args []string, err error) error {
	if !strings.HasPrefix(err.Error(), "unknown command ") {
		return err
	}
	parent, rest, findErr := root.Find(args)
	if findErr == nil || parent == nil {
		parent = root
	}
	typed := ""
	for _, a := range rest {
		if !strings.HasPrefix(a, "-") {
			typed = a
			break
		}
	}
	if typed == "" {
		return usageErr("%s (see %s --help)", firstLine(err.Error()), parent.CommandPath())
	}
	msg := fmt.Sprintf("unknown command %q for %q", typed, parent.CommandPath())
	if near := parent.SuggestionsFor(typed); len(near) > 0 {
		msg += "; did you mean " + strings.Join(near, " or ") + "?"
	}
	return usageErr("%s (see %s --help)", msg, parent.CommandPath())
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
