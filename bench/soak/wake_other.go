//go:build !linux

package main

import (
	"errors"
	"time"
)

type wakeCost struct{ Timer, Thread time.Duration }

func measureWake(int, time.Duration) (wakeCost, error) {
	return wakeCost{}, errors.New("wake: Linux only")
}
