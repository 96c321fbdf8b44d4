package main

import "syscall"

// killedWithUs: a child (a target loadgen started) dies with loadgen.
func killedWithUs() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
