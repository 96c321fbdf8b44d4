package haproxy

import (
	"fmt"
	"strings"
	"testing"
)

const showStat = `# pxname,svname,qcur,req_tot,hrsp_1xx,hrsp_2xx,hrsp_3xx,hrsp_4xx,hrsp_5xx,
admin,FRONTEND,,9,0,7,0,0,0,
inbound,FRONTEND,,12,0,10,0,1,0,
app,app,0,,,10,,,,
outbound,FRONTEND,,5,1,3,0,0,1,
`

func TestParseRequests(t *testing.T) {
	n, err := parseRequests(showStat)
	if err != nil || n != 16 {
		t.Errorf("parseRequests = %d, %v; want 16 (inbound 11 + outbound 5, admin not counted)", n, err)
	}
	for _, bad := range []string{"", "# pxname,svname\nx,FRONTEND\n", "# pxname,svname,hrsp_1xx,hrsp_2xx,hrsp_3xx,hrsp_4xx,hrsp_5xx\ninbound,FRONTEND,1,x,0,0,0\n"} {
		if _, err := parseRequests(bad); err == nil {
			t.Errorf("parseRequests(%q): no error", bad)
		}
	}
}

func TestInfoValue(t *testing.T) {
	n, err := infoValue("Name: HAProxy\nCumSslConns: 42\n", "CumSslConns")
	if err != nil || n != 42 {
		t.Errorf("infoValue = %d, %v", n, err)
	}
	if _, err := infoValue("Name: HAProxy\n", "CumSslConns"); err == nil {
		t.Error("missing field: no error")
	}
}

func FuzzParseRequests(f *testing.F) {
	f.Add(showStat, uint64(1), uint64(2), uint64(3), uint64(4))
	f.Add("", uint64(0), uint64(0), uint64(0), uint64(0))
	f.Fuzz(func(t *testing.T, junk string, a, b, c, d uint64) {
		parseRequests(junk) // must not panic
		// A plain reference sum: inbound's and outbound's frontends'
		// answers by class, whatever other proxies and servers say.
		a, b, c, d = a>>8, b>>8, c>>8, d>>8 // no overflow of the sum
		px := strings.NewReplacer(",", "", "\n", "", "\r", "", "\"", "").Replace(junk)
		if px == "inbound" || px == "outbound" || px == "" {
			px = "other"
		}
		stat := "# pxname,svname,qcur,req_tot,hrsp_1xx,hrsp_2xx,hrsp_3xx,hrsp_4xx,hrsp_5xx,\n" +
			fmt.Sprintf("inbound,FRONTEND,,0,%d,%d,0,%d,0,\n", a, b, c) +
			fmt.Sprintf("%s,FRONTEND,,9,%d,%d,%d,%d,%d,\n", px, a, b, c, d, a) +
			fmt.Sprintf("outbound,BACKEND,,9,%d,0,0,0,0,\n", d) +
			fmt.Sprintf("outbound,FRONTEND,,0,0,0,%d,0,%d,\n", d, a)
		if got, err := parseRequests(stat); err != nil || got != a+b+c+d+a {
			t.Fatalf("%q: %d, %v; want %d", stat, got, err, a+b+c+d+a)
		}
	})
}
