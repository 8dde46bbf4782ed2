package main

import "syscall"

// sysProcAttr has the kernel kill a gateway whose harness died (say, of a
// test timeout), so none outlives its run.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
