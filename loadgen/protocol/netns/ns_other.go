//go:build !linux

package netns

import (
	"errors"
	"runtime"
)

// NS is a network namespace: Linux's alone.
type NS struct{}

var errLinuxOnly = errors.New("network namespaces are Linux's: --netns runs on Linux only (here: " + runtime.GOOS + ")")

// Open fails: there are no network namespaces here.
func Open(ns string) (*NS, error) { return nil, errLinuxOnly }

// Close does nothing.
func (n *NS) Close() error { return nil }

// Do fails: there are no network namespaces here.
func (n *NS) Do(f func() error) error { return errLinuxOnly }
