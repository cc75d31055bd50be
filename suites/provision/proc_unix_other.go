//go:build unix && !linux

package provision

import "syscall"

func setParentDeathSignal(*syscall.SysProcAttr) {}
