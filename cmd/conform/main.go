package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/tableconform/conform/internal/buildinfo"
	"github.com/tableconform/conform/suites/driver"
)

// Exit statuses (issue: conform run).
const (
	exitOK       = 0
	exitFailed   = 1 // a backend failed a rule its baseline does not expect, or a baseline entry passed
	exitUsage    = 2 // a usage error, or a backend that cannot be started or reached
	exitInternal = 2
	// exitInconclusive: nothing failed, but some specs got no answer (transport errors).
	exitInconclusive = 3
)

// exitError carries an exit status and one readable line.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func usageErr(format string, args ...any) error {
	return &exitError{code: exitUsage, msg: fmt.Sprintf(format, args...)}
}

// rootCmd is conform's command line: every subcommand with its flags.
func rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "conform",
		Short:         "Conformance suite and benchmark harness for the Azure Table API",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       buildinfo.Current().Version,
	}
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(listCmd(), runCmd(), runBackendCmd(), reportCmd(), cleanCmd())
	for _, extra := range extraCommands {
		root.AddCommand(extra())
	}
	return root
}

func main() {
	root := rootCmd()
	if err := root.Execute(); err != nil {
		err = commandError(root, os.Args[1:], err)
		var ee *exitError
		if errors.As(err, &ee) {
			if ee.msg != "" {
				fmt.Fprintln(os.Stderr, "conform: "+driver.MaskSecrets(ee.msg))
			}
			os.Exit(ee.code)
		}
		fmt.Fprintln(os.Stderr, "conform: "+driver.MaskSecrets(err.Error()))
		os.Exit(exitUsage)
	}
}

// extraCommands are added by other files of this package (serve, bench).
var extraCommands []func() *cobra.Command
