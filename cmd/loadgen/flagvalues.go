package main

import (
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"loadgen/internal/units"
)

// Flag values with loadgen's one grammar (internal/units): durations in
// Go's syntax or plain seconds, counts with SI suffixes, sizes in bytes
// with binary ones. The errors pflag wraps them in name the flag.

type durationValue struct{ p *time.Duration }

func (v durationValue) Set(s string) error {
	d, err := units.ParseDuration(s)
	if err != nil {
		return err
	}
	*v.p = d
	return nil
}
func (v durationValue) String() string {
	if *v.p == 0 {
		return "0" // pflag leaves a zero default out of --help
	}
	return units.FormatDuration(*v.p)
}
func (v durationValue) Type() string { return "duration" }

func durationVarP(fl *pflag.FlagSet, p *time.Duration, name, short string, value time.Duration, usage string) {
	*p = value
	fl.VarP(durationValue{p}, name, short, usage)
}

type countValue struct{ p *int }

func (v countValue) Set(s string) error {
	n, err := units.ParseIntCount(s)
	if err != nil {
		return err
	}
	*v.p = n
	return nil
}
func (v countValue) String() string { return itoaInt(*v.p) }
func (v countValue) Type() string   { return "count" }

func countVarP(fl *pflag.FlagSet, p *int, name, short string, value int, usage string) {
	*p = value
	fl.VarP(countValue{p}, name, short, usage)
}

type count64Value struct{ p *int64 }

func (v count64Value) Set(s string) error {
	n, err := units.ParseCount(s)
	if err != nil {
		return err
	}
	*v.p = n
	return nil
}
func (v count64Value) String() string { return itoaInt(int(*v.p)) }
func (v count64Value) Type() string   { return "count" }

type bytesValue struct{ p *int }

func (v bytesValue) Set(s string) error {
	n, err := units.ParseIntBytes(s)
	if err != nil {
		return err
	}
	*v.p = n
	return nil
}
func (v bytesValue) String() string {
	if *v.p == 0 {
		return "0"
	}
	return units.FormatBytes(int64(*v.p))
}
func (v bytesValue) Type() string { return "bytes" }

func bytesVar(fl *pflag.FlagSet, p *int, name string, value int, usage string) {
	*p = value
	fl.Var(bytesValue{p}, name, usage)
}

func itoaInt(n int) string { return strconv.Itoa(n) }
