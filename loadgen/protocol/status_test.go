package protocol

import "testing"

func TestStatusSet(t *testing.T) {
	var def StatusSet
	for code, failed := range map[int]bool{200: false, 308: false, 399: false, 400: true, 503: true} {
		if def.Failed(code) != failed {
			t.Errorf("default rule: %d failed %v", code, !failed)
		}
	}
	if (*StatusSet)(nil).Failed(200) || !(*StatusSet)(nil).Failed(404) {
		t.Error("a nil set is not the default rule")
	}
	for _, tc := range []struct {
		in, str string
		ok, bad []int
	}{
		{"2xx", "200-299", []int{200, 204, 299}, []int{199, 300, 308, 404}},
		{"200,204", "200,204", []int{200, 204}, []int{201, 308}},
		{"200-299, 404", "200-299,404", []int{250, 404}, []int{308, 403, 500}},
		{"3XX,200", "200,300-399", []int{200, 308}, []int{201}},
	} {
		s, err := ParseStatusSet(tc.in)
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if s.String() != tc.str {
			t.Errorf("%s reads as %s, want %s", tc.in, s.String(), tc.str)
		}
		for _, c := range tc.ok {
			if s.Failed(c) {
				t.Errorf("%s: %d failed", tc.in, c)
			}
		}
		for _, c := range append(tc.bad, -1, 0, 1000, 5000) {
			if !s.Failed(c) {
				t.Errorf("%s: %d succeeded", tc.in, c)
			}
		}
	}
	for _, bad := range []string{"", "2x", "6xx", "0xx", "20", "2000", "abc", "299-200", "200-", "200,,204"} {
		if _, err := ParseStatusSet(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
