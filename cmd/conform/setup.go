package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tableconform/conform/suites/provision"
)

func init() { extraCommands = append(extraCommands, setupCmd) }

// setupCmd installs the pinned Node.js packages (Azurite, the JavaScript SDK) once; it is
// what `make deps` runs, and a no-op when the install matches the committed lock file.
func setupCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "setup",
		Short: "Install the pinned npm packages (Azurite, the JavaScript Table SDK) unless installed",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := provision.InstallNodeTools(context.Background())
			if err != nil {
				return &exitError{code: exitInternal, msg: "setup: " + err.Error()}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "npm packages installed in %s\n", dir)
			return nil
		},
	}
}
