//go:build !linux

package main

import "syscall"

// killedWithUs returns nil: there is no parent-death signal off Linux; the
// child's --for bounds its life.
func killedWithUs() *syscall.SysProcAttr { return nil }
