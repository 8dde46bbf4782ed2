//go:build !linux

package redistest

import "syscall"

// sysProcAttr: elsewhere a server whose test process died must be killed
// by hand.
func sysProcAttr() *syscall.SysProcAttr { return nil }
