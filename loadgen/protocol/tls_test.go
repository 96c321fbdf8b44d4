package protocol

import (
	"crypto/tls"
	"reflect"
	"strings"
	"testing"
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
