package protocol

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"reflect"
	"strings"
	"testing"

	"loadgen/targets/tlscert"
)

func TestTLSConfigDefaults(t *testing.T) {
	c, err := TLS{Enabled: true}.Config("example.test", "h2")
	if err != nil {
		t.Fatal(err)
	}
	if c.ServerName != "example.test" || !c.SessionTicketsDisabled || c.ClientSessionCache != nil || c.InsecureSkipVerify ||
		c.MinVersion != tls.VersionTLS12 || !reflect.DeepEqual(c.CurvePreferences, DefaultCurves()) || !reflect.DeepEqual(c.NextProtos, []string{"h2"}) {
		t.Errorf("defaults: %+v", c)
	}
	if c, _ := (TLS{}).Config("x"); c != nil {
		t.Error("TLS off must give no config")
	}
	r, _ := TLS{Enabled: true, Resume: true}.Config("x")
	if r.ClientSessionCache == nil || r.SessionTicketsDisabled {
		t.Error("Resume must allow session resumption")
	}
}

func TestParsers(t *testing.T) {
	if ids, err := ParseCurves("X25519MLKEM768, x25519,P-256"); err != nil ||
		!reflect.DeepEqual(ids, []tls.CurveID{tls.X25519MLKEM768, tls.X25519, tls.CurveP256}) {
		t.Errorf("ParseCurves = %v, %v", ids, err)
	}
	for _, bad := range []string{"", "curve9", ","} {
		if _, err := ParseCurves(bad); err == nil {
			t.Errorf("ParseCurves(%q): no error", bad)
		}
	}
	if v, err := ParseTLSVersion("1.3"); err != nil || v != tls.VersionTLS13 {
		t.Errorf("ParseTLSVersion(1.3) = %v, %v", v, err)
	}
	if _, err := ParseTLSVersion("1.4"); err == nil {
		t.Error("TLS 1.4 accepted")
	}
	if ids, err := ParseCiphers("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"); err != nil || len(ids) != 1 {
		t.Errorf("ParseCiphers: %v %v", ids, err)
	}
	if _, err := ParseCiphers("TLS_AES_128_GCM_SHA256"); err == nil || !strings.Contains(err.Error(), "TLS 1.3") {
		t.Errorf("a TLS 1.3 suite must be refused with a reason, got %v", err)
	}
}

// FormatCurves writes what ParseCurves reads: --tls-curves' help shows
// DefaultCurves so.
func TestFormatCurves(t *testing.T) {
	for _, c := range []struct {
		ids  []tls.CurveID
		want string
	}{
		{DefaultCurves(), "X25519,P256"},
		{[]tls.CurveID{tls.CurveP384, tls.CurveP521, tls.X25519MLKEM768}, "P384,P521,X25519MLKEM768"},
	} {
		got := FormatCurves(c.ids)
		if got != c.want {
			t.Errorf("FormatCurves(%v) = %q, want %q", c.ids, got, c.want)
		}
		if back, err := ParseCurves(got); err != nil || !reflect.DeepEqual(back, c.ids) {
			t.Errorf("ParseCurves(%q) = %v, %v, want %v", got, back, err, c.ids)
		}
	}
	for _, alias := range []string{"p-256", "P-384", "p-521"} {
		if _, err := ParseCurves(alias); err != nil {
			t.Errorf("ParseCurves(%q): %v", alias, err)
		}
	}
	_, err := ParseCurves("curve9")
	if want := `unknown key exchange "curve9": use X25519, P256, P384, P521 or X25519MLKEM768`; err == nil || err.Error() != want {
		t.Errorf("ParseCurves(curve9) error = %v, want %q", err, want)
	}
}

// countingConn counts the writes that reach the socket, and fails them
// once fail is set.
type countingConn struct {
	net.Conn
	writes int
	fail   error
}

func (c *countingConn) Write(b []byte) (int, error) {
	c.writes++
	if c.fail != nil {
		return 0, c.fail
	}
	return c.Conn.Write(b)
}

// flightClient handshakes, in TLS version v, with a server that echoes
// what it reads, through a FlightConn over a countingConn.
func flightClient(t *testing.T, v uint16) (*tls.Conn, *FlightConn, *countingConn) {
	t.Helper()
	cert, err := tlscert.New(tlscert.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	raw := serveTLSOnce(t, cert.TLS, func(c net.Conn) net.Conn { return c }, func(sc *tls.Conn) {
		io.Copy(sc, sc) //nolint:errcheck // echoes until the client goes
	})
	cc := &countingConn{Conn: raw}
	fc := &FlightConn{Conn: cc}
	tc := tls.Client(fc, &tls.Config{InsecureSkipVerify: true, MinVersion: v, MaxVersion: v})
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	fc.Handshaken()
	return tc, fc, cc
}

// Through a FlightConn, TLS 1.3's Finished waits for the first request
// and leaves with it, in one write; TLS 1.2's went with the handshake's
// last read. After that first exchange writes go straight through.
func TestFlightConn(t *testing.T) {
	for _, tt := range []struct {
		v            uint16
		writesShaken int // writes that reached the socket in the handshake
	}{{tls.VersionTLS13, 1}, {tls.VersionTLS12, 2}} {
		tc, _, cc := flightClient(t, tt.v)
		name := tls.VersionName(tt.v)
		if cc.writes != tt.writesShaken {
			t.Fatalf("%s: %d writes in the handshake, want %d", name, cc.writes, tt.writesShaken)
		}
		b := make([]byte, 7)
		for i, want := range []int{tt.writesShaken, tt.writesShaken + 2} {
			if _, err := tc.Write([]byte("request")); err != nil {
				t.Fatal(err)
			}
			if cc.writes != want {
				t.Fatalf("%s: request %d written: %d writes reached the socket, want %d", name, i+1, cc.writes, want)
			}
			if _, err := io.ReadFull(tc, b); err != nil || string(b) != "request" {
				t.Fatalf("%s: echo %q, %v", name, b, err)
			}
			if cc.writes != tt.writesShaken+1+i {
				t.Fatalf("%s: request %d answered: %d writes, want %d", name, i+1, cc.writes, tt.writesShaken+1+i)
			}
		}
	}
}

// What was held and failed to leave fails the read that sent it, and is
// told apart (WriteErr): the request did not leave.
func TestFlightConnWriteError(t *testing.T) {
	tc, fc, cc := flightClient(t, tls.VersionTLS13)
	broken := errors.New("broken pipe")
	cc.fail = broken
	if _, err := tc.Write([]byte("request")); err != nil {
		t.Fatalf("held write: %v", err)
	}
	if _, err := tc.Read(make([]byte, 7)); !errors.Is(err, broken) {
		t.Fatalf("read after a failed held write: %v", err)
	}
	if !errors.Is(fc.WriteErr, broken) {
		t.Fatalf("WriteErr %v", fc.WriteErr)
	}
}
