//go:build !linux

package proxyproc

import (
	"context"
	"errors"
	"net"
	"syscall"
)

var errUnsupported = errors.New("proxyproc: running a proxy needs linux (/proc, process groups, network namespaces)")

// NetNSDir is where `ip netns add` keeps named namespaces.
const NetNSDir = "/var/run/netns"

func supported() error { return errUnsupported }

// SysProcAttr returns nil off Linux; see proc_linux.go.
func SysProcAttr(*User) *syscall.SysProcAttr { return nil }
func enter(string) error                     { return errUnsupported }

// Kill, Children, GroupMembers, Alive, ReadStat: see proc_linux.go.
func Kill(int) error                  { return errUnsupported }
func Children(int) ([]int, error)     { return nil, errUnsupported }
func GroupMembers(int) ([]int, error) { return nil, errUnsupported }
func Alive(int, string) bool          { return false }

// Stat is the head of /proc/PID/stat.
type Stat struct {
	Comm  string
	State byte
	PPID  int
	PGRP  int
}

func ReadStat(int) (Stat, bool) { return Stat{}, false }

// In runs f: only this process's own namespace exists here.
func In(ns string, f func() error) error {
	if ns != "" {
		return errUnsupported
	}
	return f()
}

// DialContext dials addr; ns must be empty here.
func DialContext(ctx context.Context, ns, addr string) (net.Conn, error) {
	if ns != "" {
		return nil, errUnsupported
	}
	return (&net.Dialer{}).DialContext(ctx, "tcp", addr)
}

// Reachable reports whether a TCP connection to addr succeeds.
func Reachable(ns, addr string) bool {
	c, err := DialContext(context.Background(), ns, addr)
	if err == nil {
		c.Close()
	}
	return err == nil
}
