//go:build !linux

package lab

import (
	"context"
	"errors"
	"syscall"
)

// RunUDPTunnel needs Linux's TUN devices.
func RunUDPTunnel(ctx context.Context, c TunnelConfig, ready func()) error {
	return errors.New("lab: the udp tunnel needs Linux")
}

// diesWithParent returns nil: no such attribute off Linux (nor a lab to run).
func diesWithParent() *syscall.SysProcAttr { return nil }
