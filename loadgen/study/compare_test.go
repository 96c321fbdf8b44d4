package study

import (
	"reflect"
	"strings"
	"testing"
)

// An ordering is named as the study states it, and a table names those
// not decidable for contention.
func TestOrderingAndContended(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    Verdict
		want string
	}{
		{"below", Verdict{Lower: "vxlan", Higher: "host-gw"}, "vxlan below host-gw on TCP stream"},
		{"about the same", Verdict{Lower: "istio", Higher: "direct", About: true}, "istio about the same as direct on TCP stream"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.v.Ordering("TCP stream"); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			tc.v.Outcome = WithinNoise
			if line := tc.v.Line("TCP stream"); !strings.HasPrefix(line, tc.want+": ") {
				t.Errorf("the verdict's line does not start with its ordering: %q", line)
			}
		})
	}
	tb := Table{PublishedTable: PublishedTable{Metric: "m"}, Verdicts: []Verdict{
		{Lower: "a", Higher: "b", Outcome: Holds},
		{Lower: "c", Higher: "d", Outcome: Contended},
		{Lower: "e", Higher: "f", Outcome: WithinNoise},
		{Lower: "g", Higher: "h", About: true, Outcome: Contended},
	}}
	if got, want := tb.Contended(), []string{"c below d on m", "g about the same as h on m"}; !reflect.DeepEqual(got, want) {
		t.Errorf("contended %q, want %q", got, want)
	}
	if got := (Table{Verdicts: []Verdict{{Outcome: Holds}}}).Contended(); got != nil {
		t.Errorf("a quiet table: %q", got)
	}
}
