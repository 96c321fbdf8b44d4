package client

import "testing"

// ResolveTarget: the argument beats the file's url, --targets excludes
// both, at most one argument.
func TestResolveTarget(t *testing.T) {
	const u, v = "http://a:1/", "http://b:2/"
	for _, tc := range []struct {
		name    string
		args    []string
		fileURL string
		mix     bool
		want    string
		err     string
	}{
		{"the argument", []string{u}, "", false, u, ""},
		{"the file's url", nil, v, false, v, ""},
		{"the argument beats the file", []string{u}, v, false, u, ""},
		{"none", nil, "", false, "", "run takes one target URL (or --targets FILE, or url in -f's file), got 0 arguments"},
		{"two", []string{u, v}, "", false, "", "run takes one target URL (or --targets FILE), got 2 arguments"},
		{"two with a mix", []string{u, v}, "", true, "", "run takes one target URL (or --targets FILE), got 2 arguments"},
		{"a mix alone", nil, "", true, "", ""},
		{"a mix and an argument", []string{u}, "", true, "", "--targets gives the requests and where they go: leave out the URL (" + u + ")"},
		{"a mix and the file's url", nil, v, true, "", "run.yaml: url and --targets both say where requests go: keep one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ResolveTarget(tc.args, "run.yaml", tc.fileURL, tc.mix)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("ResolveTarget() = %q, %v; want error %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ResolveTarget() = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// CheckMixRequest refuses -m, --body or --body-file with --targets.
func TestCheckMixRequest(t *testing.T) {
	const msg = "--targets gives each request its method and body: leave out -m, --body and --body-file"
	for _, tc := range []struct {
		method string
		body   bool
		err    string
	}{{"", false, ""}, {"PUT", false, msg}, {"", true, msg}, {"POST", true, msg}} {
		err := CheckMixRequest(tc.method, tc.body)
		if (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
			t.Errorf("CheckMixRequest(%q, %v) = %v, want %q", tc.method, tc.body, err, tc.err)
		}
	}
}
