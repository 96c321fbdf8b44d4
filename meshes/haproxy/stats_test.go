package haproxy

import "testing"

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
	f.Add(showStat)
	f.Fuzz(func(t *testing.T, s string) {
		parseRequests(s) // must not panic
	})
}
