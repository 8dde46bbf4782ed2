//go:build !linux

package main

import "syscall"

// sysProcAttr: elsewhere a gateway whose harness died must be killed by hand.
func sysProcAttr() *syscall.SysProcAttr { return nil }
