//go:build !linux

package lab

import (
	"context"
	"errors"
)

// RunUDPTunnel needs Linux's TUN devices.
func RunUDPTunnel(ctx context.Context, c TunnelConfig, ready func()) error {
	return errors.New("lab: the udp tunnel needs Linux")
}
