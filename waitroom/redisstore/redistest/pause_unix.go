//go:build unix

package redistest

import (
	"os"
	"syscall"
)

func pause(p *os.Process, stop bool) error {
	if stop {
		return p.Signal(syscall.SIGSTOP)
	}
	return p.Signal(syscall.SIGCONT)
}
