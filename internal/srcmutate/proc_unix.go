//go:build unix

package srcmutate

import (
	"os/exec"
	"syscall"
	"time"
)

// setProcessGroup makes the go command and the test binary it starts one process group, so
// that a timeout ends both (a mutant can loop forever inside the test binary).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
}
