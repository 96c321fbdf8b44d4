//go:build !loadgen_wire_next

package k8s

// wireNext is 0: a build speaks WireVersion.
const wireNext = 0
