package main

import "syscall"

// killedWithUs makes a child (a target loadgen started) die with loadgen.
func killedWithUs() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
