//go:build !unix

package srcmutate

import (
	"os/exec"
	"time"
)

func setProcessGroup(cmd *exec.Cmd) { cmd.WaitDelay = 10 * time.Second }
