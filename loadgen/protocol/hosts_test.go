package protocol

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// fakeHost is a host's Dialer that counts its lookups and closes.
type fakeHost struct {
	resolved, closed int
	fail             error
	opened           int64
	order            *[]string
	name             string
}

func (f *fakeHost) Dial(context.Context) (Conn, error) { return nil, errors.New("not dialed") }
func (f *fakeHost) Resolve(context.Context) error {
	f.resolved++
	*f.order = append(*f.order, f.name)
	return f.fail
}
func (f *fakeHost) Close() error  { f.closed++; return nil }
func (f *fakeHost) Opened() int64 { return f.opened }

// Each host's name is looked up once, in order, before any connect; a
// lookup that fails names its host; Close closes every host's Dialer, and
// the connections opened are the hosts' summed.
func TestHosts(t *testing.T) {
	var order []string
	a := &fakeHost{order: &order, name: "a", opened: 2}
	b := &fakeHost{order: &order, name: "b", opened: 3}
	hd, err := NewHosts([]string{"http://a:80", "http://b:80"}, []Dialer{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if err := hd.(Resolver).Resolve(t.Context()); err != nil {
		t.Fatal(err)
	}
	if a.resolved != 1 || b.resolved != 1 || strings.Join(order, ",") != "a,b" {
		t.Errorf("lookups: a %d, b %d, in order %v; want once each, a then b", a.resolved, b.resolved, order)
	}
	if n := hd.(ConnCounter).Opened(); n != 5 {
		t.Errorf("opened %d, want 5", n)
	}
	hd.(interface{ Close() error }).Close()
	if a.closed != 1 || b.closed != 1 {
		t.Errorf("closed a %d, b %d times, want once each", a.closed, b.closed)
	}
	b.fail = errors.New("no such host")
	if err := hd.(Resolver).Resolve(t.Context()); err == nil || err.Error() != "http://b:80: no such host" {
		t.Errorf("a failed lookup: %v, want it named", err)
	}
	if hd.Origin(1) != "http://b:80" || hd.Host(1) != Dialer(b) || hd.Hosts() != 2 {
		t.Errorf("host 2: %s %T of %d", hd.Origin(1), hd.Host(1), hd.Hosts())
	}
}

// A load on several hosts needs a connection or more on each: the
// engine's rule for a request mix, which loadgen/client asks before it
// builds a Dialer (Spec.MixHosts).
func TestCheckHostConns(t *testing.T) {
	for _, tc := range []struct {
		hosts, conns int
		want         string
	}{
		{1, 1, ""},
		{2, 2, ""},
		{3, 8, ""},
		{2, 1, "goes to 2 hosts, a connection or more each: give at least -c 2"},
		{5, 4, "goes to 5 hosts, a connection or more each: give at least -c 5"},
	} {
		err := CheckHostConns(tc.hosts, tc.conns)
		if (tc.want == "") != (err == nil) || (err != nil && err.Error() != tc.want) {
			t.Errorf("CheckHostConns(%d, %d) = %v, want %q", tc.hosts, tc.conns, err, tc.want)
		}
	}
}
