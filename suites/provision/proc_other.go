//go:build !unix

package provision

import "os/exec"

func setProcessGroup(*exec.Cmd) {}

func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}

func terminateGroup(cmd *exec.Cmd) error { return killGroup(cmd) }
