//go:build !linux

package loadgen

func fileLimit() uint64 { return 0 }
