package results

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Labels name a run for its reader (--label mesh=istio, as fortio's
// -labels, Nighthawk's --label and k6's --tag): key to value, carried into
// the run's JSON, the reports, JUnit and Prometheus. Keys are unique.
type Labels map[string]string

// MaxLabelLen bounds a label's key and its value, in bytes.
const MaxLabelLen = 256

// ParseLabels reads --label flags, each KEY=VALUE (Add). nil for no
// flags.
func ParseLabels(flags []string) (Labels, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	out := make(Labels, len(flags))
	for _, f := range flags {
		if err := out.Add(f); err != nil {
			return nil, fmt.Errorf("--label %q: %v", f, err)
		}
	}
	return out, nil
}

// Add adds one label, KEY=VALUE: the key non-empty, of printable
// characters but '=', ',' and spaces; the value non-empty and printable
// (spaces allowed); no key twice, nor two keys with one Prometheus name
// (PromName).
func (l Labels) Add(f string) error {
	k, v, ok := strings.Cut(f, "=")
	if !ok {
		return fmt.Errorf("want KEY=VALUE, e.g. mesh=istio")
	}
	if err := checkLabelKey(k); err != nil {
		return err
	}
	if err := checkLabelValue(v); err != nil {
		return err
	}
	if old, dup := l[k]; dup {
		return fmt.Errorf("key %q given twice (first %s=%s)", k, k, old)
	}
	p := PromName(k)
	for other := range l {
		if PromName(other) == p {
			return fmt.Errorf("keys %q and %q are both %q in Prometheus: rename one", other, k, p)
		}
	}
	l[k] = v
	return nil
}

func checkLabelKey(k string) error {
	switch {
	case k == "":
		return fmt.Errorf("empty key: want KEY=VALUE, e.g. mesh=istio")
	case len(k) > MaxLabelLen:
		return fmt.Errorf("key longer than %d bytes", MaxLabelLen)
	case !utf8.ValidString(k):
		return fmt.Errorf("key not UTF-8")
	}
	for _, r := range k {
		if r == ',' || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return fmt.Errorf("key %q: no spaces, commas or control characters", k)
		}
	}
	return nil
}

func checkLabelValue(v string) error {
	switch {
	case v == "":
		return fmt.Errorf("empty value: want KEY=VALUE (Prometheus reads an empty label as none)")
	case len(v) > MaxLabelLen:
		return fmt.Errorf("value longer than %d bytes", MaxLabelLen)
	case !utf8.ValidString(v):
		return fmt.Errorf("value not UTF-8")
	}
	for _, r := range v {
		if r != ' ' && !unicode.IsPrint(r) {
			return fmt.Errorf("value %q: no control characters", v)
		}
	}
	return nil
}

// Check tells whether l holds only what ParseLabels accepts (a file's
// labels, read back).
func (l Labels) Check() error {
	flags := make([]string, 0, len(l))
	for _, k := range l.Keys() {
		flags = append(flags, k+"="+l[k])
	}
	_, err := ParseLabels(flags)
	return err
}

// Keys are l's keys, sorted.
func (l Labels) Keys() []string {
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// String is "k1=v1,k2=v2", keys sorted; "" for none.
func (l Labels) String() string {
	var b strings.Builder
	for i, k := range l.Keys() {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k + "=" + l[k])
	}
	return b.String()
}

// Flags are l as the --label flags that give it, keys sorted.
func (l Labels) Flags() []string {
	out := make([]string, 0, 2*len(l))
	for _, k := range l.Keys() {
		out = append(out, "--label", k+"="+l[k])
	}
	return out
}

// Equal tells whether l and o hold the same keys and values.
func (l Labels) Equal(o Labels) bool {
	if len(l) != len(o) {
		return false
	}
	for k, v := range l {
		if w, ok := o[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// PromName is a key as a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*):
// every other character becomes '_', a leading digit gains a '_' before
// it, and a name Prometheus reserves (a leading "__") gains "label" before
// it. mesh.version is mesh_version.
func PromName(k string) string {
	var b strings.Builder
	for i, r := range k {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '_':
			b.WriteRune(r)
		case r >= '0' && r <= '9':
			if i == 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := b.String()
	if strings.HasPrefix(s, "__") {
		s = "label" + s
	}
	return s
}

// CommonLabels are the labels every one of ls carries with the same
// value, and the keys of the others, sorted: what a merge of runs, a
// sweep's JUnit suite or its report says of them all. nil and none for
// no ls.
func CommonLabels(ls []Labels) (Labels, []string) {
	if len(ls) == 0 {
		return nil, nil
	}
	var common Labels
	var other []string
	seen := map[string]bool{}
	for _, l := range ls {
		for k := range l {
			if seen[k] {
				continue
			}
			seen[k] = true
			v, alike := l[k], true
			for _, m := range ls {
				if w, ok := m[k]; !ok || w != v {
					alike = false
					break
				}
			}
			if !alike {
				other = append(other, k)
				continue
			}
			if common == nil {
				common = Labels{}
			}
			common[k] = v
		}
	}
	slices.Sort(other)
	return common, other
}
