package worker

import (
	"strings"
	"testing"
)

func TestIndexFromEnv(t *testing.T) {
	for _, tc := range []struct {
		env   string
		index int
		ok    bool
		err   string
	}{
		{"", 0, false, ""},
		{"0", 0, true, ""},
		{"3", 3, true, ""},
		{"x", 0, false, `JOB_COMPLETION_INDEX "x": strconv.Atoi: parsing "x": invalid syntax`},
	} {
		t.Run(tc.env, func(t *testing.T) {
			t.Setenv(IndexEnv, tc.env)
			i, ok, err := IndexFromEnv()
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || i != tc.index || ok != tc.ok {
				t.Errorf("IndexFromEnv = %d, %v, %v; want %d, %v", i, ok, err, tc.index, tc.ok)
			}
		})
	}
}
