//go:build loadgen_wire_next

package k8s

// wireNext makes a build (-tags loadgen_wire_next) speak the wire version
// after this one: the end-to-end tests' worker image of another loadgen.
const wireNext = 1
