// Package layering holds the test of loadgen's import rule
// (docs/ARCHITECTURE.md, "Layers"): which of the project's packages each
// package may import, checked over the source tree with go/parser.
package layering
