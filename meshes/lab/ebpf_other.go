//go:build !linux

package lab

import "errors"

type bpfState struct{}

func (s *bpfState) close() error { return nil }

func attachPrograms(l *Lab) (*bpfState, error) { return nil, errors.New("lab: ebpf needs Linux") }

func bpfAvailable(ns, dev string) error { return errors.New("eBPF needs Linux") }
