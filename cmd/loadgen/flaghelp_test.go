package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

var (
	// saysDefault: the usage says what happens when the flag is not given.
	saysDefault = regexp.MustCompile(`(?i)\bdefault\b|\brequired\b|(^|[\s(;])(0|none|off|unset|empty)\s*[:=]`)
	// givesExample: the usage shows a value to give.
	givesExample = regexp.MustCompile(`(?i)\be\.g\.|\bfor example\b`)
	// durationForm: a duration as the flag takes it (10s, 5m0s, 200µs).
	durationForm = regexp.MustCompile(`\b(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+\b`)
	// sizeForm: a size with its unit (1KiB, 64Mi, 1024 B, 64k).
	sizeForm = regexp.MustCompile(`\b\d+(\.\d+)?\s?(B|[kKMG]i?B?|[kKMG]i)\b`)
	// sizeName: the string flags that hold a size.
	sizeName = regexp.MustCompile(`(^|-)(size|memory|payloads?)$`)
)

// shownDefault is the "(default …)" pflag appends to a flag's usage in
// --help, or "" when it shows none (a zero value).
func shownDefault(f *pflag.Flag) string {
	fs := pflag.NewFlagSet("", pflag.ContinueOnError)
	fs.AddFlag(f)
	line := strings.TrimSpace(fs.FlagUsages())
	shown := fmt.Sprintf("(default %s)", f.DefValue)
	if f.Value.Type() == "string" {
		shown = fmt.Sprintf("(default %q)", f.DefValue)
	}
	if !strings.HasSuffix(line, shown) {
		return ""
	}
	return shown
}

// flagHelpProblem says what a flag's usage leaves a user to guess, or "".
// The rule: a bool needs nothing. Any other flag passes when --help shows
// a default (pflag's "(default X)", left out for "", 0, 0s and []), or its
// usage says the default or what leaving it out does ("default …",
// "required", "0: …", "none: …", "off: …", "unset: …", "empty: …"), or
// gives an example ("e.g. …"). A duration (type duration) and a size (type
// bytes, or a string flag named …size, …memory or …payload(s)) also show
// their unit form, in the shown default or in the usage: 10s, 500ms, 1KiB.
func flagHelpProblem(f *pflag.Flag) string {
	if f.Value.Type() == "bool" {
		return ""
	}
	shown := shownDefault(f)
	var missing []string
	if shown == "" && !saysDefault.MatchString(f.Usage) && !givesExample.MatchString(f.Usage) {
		missing = append(missing, "a default or an example")
	}
	switch {
	case f.Value.Type() == "duration":
		if !durationForm.MatchString(shown + " " + f.Usage) {
			missing = append(missing, "a duration's form (e.g. 10s)")
		}
	case f.Value.Type() == "bytes" || f.Value.Type() == "string" && sizeName.MatchString(f.Name):
		if !sizeForm.MatchString(shown + " " + f.Usage) {
			missing = append(missing, "a size's form (e.g. 1KiB)")
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return "no " + strings.Join(missing, ", no ")
}

// Every flag of every command (local and persistent, but hidden ones and
// hidden commands') lets a user know its default and its form from
// --help alone: see flagHelpProblem for the rule. No flag is let off:
// each one's usage can say its default or give an example.
func TestFlagHelpSaysDefaultAndForm(t *testing.T) {
	var bad []string
	n := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden {
			return
		}
		seen := map[string]bool{}
		check := func(f *pflag.Flag) {
			if f.Hidden || seen[f.Name] {
				return
			}
			seen[f.Name] = true
			n++
			if p := flagHelpProblem(f); p != "" {
				bad = append(bad, c.CommandPath()+" --"+f.Name+": "+p+": "+f.Usage)
			}
		}
		c.LocalNonPersistentFlags().VisitAll(check)
		c.PersistentFlags().VisitAll(check)
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(newRoot(nil, nil))
	if n < 300 {
		t.Errorf("checked %d flags, want every command's", n)
	}
	slices.Sort(bad)
	if len(bad) > 0 {
		t.Errorf("%d of %d flags' help leave their default or form to guess:\n%s", len(bad), n, strings.Join(bad, "\n"))
	}
}

// The rule itself, on flags made for it.
func TestFlagHelpProblem(t *testing.T) {
	fs := pflag.NewFlagSet("", pflag.ContinueOnError)
	fs.Bool("b", false, "a bool")
	fs.String("shown", "x", "a string with a default")
	fs.String("bare", "", "a string")
	fs.String("said", "", "a string (default the host)")
	fs.String("zero", "", "a string (none: no limit)")
	fs.String("eg", "", "a file, e.g. out.json")
	fs.Duration("d-shown", 10*time.Second, "a duration")
	fs.Duration("d-mixed", 5*time.Minute, "a duration")
	fs.Duration("d-micro", 200*time.Microsecond, "a duration")
	fs.Duration("d-bare", 0, "a duration (default none)")
	fs.Duration("d-eg", 0, "a duration, e.g. 5s")
	fs.String("payload", "", "a size (default none)")
	fs.String("stream-size", "", "a size (default 1KiB)")
	want := map[string]bool{"b": true, "shown": true, "said": true, "zero": true, "eg": true, "d-shown": true, "d-mixed": true, "d-micro": true, "d-eg": true, "stream-size": true}
	fs.VisitAll(func(f *pflag.Flag) {
		if got := flagHelpProblem(f) == ""; got != want[f.Name] {
			t.Errorf("--%s %q: passes %v, want %v (%s)", f.Name, f.Usage, got, want[f.Name], flagHelpProblem(f))
		}
	})
}

// shownDefault tells pflag's "(default …)" from one the usage says.
func TestShownDefault(t *testing.T) {
	fs := pflag.NewFlagSet("", pflag.ContinueOnError)
	fs.String("s", "x", "a string")
	fs.String("said", "", "a string (default the host)")
	fs.Int("n", 3, "an int")
	fs.Duration("d", 0, "a duration (default none)")
	want := map[string]string{"s": `(default "x")`, "n": "(default 3)"}
	fs.VisitAll(func(f *pflag.Flag) {
		if got := shownDefault(f); got != want[f.Name] {
			t.Errorf("--%s: shown %q, want %q", f.Name, got, want[f.Name])
		}
	})
}
