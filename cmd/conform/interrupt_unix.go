//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup puts a backend process in a process group of its own, so that a
// Ctrl-C at the terminal reaches only `conform run`, which passes it on once: Ginkgo
// takes a second interrupt as "skip the cleanup", and the run's tables would stay.
func ownProcessGroup(c *exec.Cmd) {
	if c.SysProcAttr == nil {
		c.SysProcAttr = &syscall.SysProcAttr{}
	}
	c.SysProcAttr.Setpgid = true
}
