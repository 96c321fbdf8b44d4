//go:build !linux

package main

import "syscall"

// killedWithUs: no parent-death signal off Linux; the child's --for bounds
// its life.
func killedWithUs() *syscall.SysProcAttr { return nil }
