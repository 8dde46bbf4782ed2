package redistest

import "syscall"

// sysProcAttr has the kernel kill a server whose test process died (say, of
// a test timeout), so no redis-server outlives its test.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
