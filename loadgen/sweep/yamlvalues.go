package sweep

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"loadgen/internal/units"
)

// Ladder is a list of rungs; in YAML a string ("c1t1..c128t128") or a list.
type Ladder []Rung

func (l *Ladder) UnmarshalYAML(n *yaml.Node) error {
	var text string
	switch n.Kind {
	case yaml.ScalarNode:
		text = n.Value
	case yaml.SequenceNode:
		parts := make([]string, len(n.Content))
		for i, c := range n.Content {
			parts[i] = c.Value
		}
		text = strings.Join(parts, ",")
	default:
		return fmt.Errorf("line %d: ladder: want a string like c1t1..c128t128 or a list", n.Line)
	}
	r, err := ParseLadder(text)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*l = r
	return nil
}

func (l Ladder) MarshalJSON() ([]byte, error) {
	parts := make([]string, len(l))
	for i, r := range l {
		parts[i] = strconv.Quote(r.String())
	}
	return []byte("[" + strings.Join(parts, ",") + "]"), nil
}

// Payloads are sizes in bytes; in YAML numbers or strings like 1KiB.
type Payloads []int

func (p *Payloads) UnmarshalYAML(n *yaml.Node) error {
	nodes := n.Content
	if n.Kind == yaml.ScalarNode {
		nodes = []*yaml.Node{n}
	} else if n.Kind != yaml.SequenceNode {
		return fmt.Errorf("line %d: payloads: want a list like [100, 1KiB, 1MiB]", n.Line)
	}
	out := make(Payloads, 0, len(nodes))
	for _, c := range nodes {
		v, err := ParseSize(c.Value)
		if err != nil {
			return fmt.Errorf("line %d: %w", c.Line, err)
		}
		out = append(out, v)
	}
	*p = out
	return nil
}

// Rates are open-loop rates (requests/s); 0 is closed loop. In YAML a
// number or a list.
type Rates []float64

func (r *Rates) UnmarshalYAML(n *yaml.Node) error {
	nodes := n.Content
	if n.Kind == yaml.ScalarNode {
		nodes = []*yaml.Node{n}
	} else if n.Kind != yaml.SequenceNode {
		return fmt.Errorf("line %d: rate: want a number or a list of numbers", n.Line)
	}
	out := make(Rates, 0, len(nodes))
	for _, c := range nodes {
		v, err := ParseRate(c.Value)
		if err != nil {
			return fmt.Errorf("line %d: %w", c.Line, err)
		}
		out = append(out, v)
	}
	*r = out
	return nil
}

// Duration is a time.Duration written "30s" in YAML and JSON.
type Duration time.Duration

func (d Duration) D() time.Duration { return time.Duration(d) }

func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := units.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*d = Duration(v)
	return nil
}

// ParseRate reads one open-loop rate of a sweep: requests/s ≥ 0 with an
// optional SI suffix (1.5k); 0 is closed loop.
func ParseRate(s string) (float64, error) {
	v, err := units.ParseRate(s)
	if err != nil || v > 1e9 {
		return 0, fmt.Errorf("rate %q: want requests/s ≥ 0 (0 = closed loop), e.g. 2000 or 1.5k", s)
	}
	return v, nil
}

func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(strconv.Quote(time.Duration(d).String())), nil
}

func (d *Duration) UnmarshalJSON(b []byte) error {
	s, err := strconv.Unquote(string(b))
	if err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	*d = Duration(v)
	return err
}

func (l *Ladder) UnmarshalJSON(b []byte) error {
	var parts []string
	if err := json.Unmarshal(b, &parts); err != nil {
		return err
	}
	r, err := ParseLadder(strings.Join(parts, ","))
	*l = r
	return err
}
