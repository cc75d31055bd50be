//go:build linux

package provision

import "syscall"

// setParentDeathSignal makes the kernel kill a started emulator if the process that
// started it dies without calling Close.
func setParentDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
