//go:build !linux

package ratecheck

import "time"

// runDelay is unknown off Linux: the Probe's oversleep alone stands.
func runDelay() time.Duration { return 0 }
