package ratecheck_test

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"loadgen/internal/race"
	"loadgen/internal/ratecheck"
	"loadgen/results"
)

// A pacer deliberately slowed is caught whatever lag it reports; a stall a
// busy machine makes is excused by the sends it spans, no more.
func TestShort(t *testing.T) {
	ms := func(n float64) results.Duration { return results.Duration(n * float64(time.Millisecond)) }
	for _, c := range []struct {
		name     string
		p        results.Pacing
		designed time.Duration
		want     int64 // -1: an error
	}{
		// -R 2000 for 3 s sent at 1000/s: 1.5 s behind at the end, every
		// send late. The old allowance (max lag / interval) excused 3,000.
		{"half rate", results.Pacing{Sent: 3000, Late: 2998, MaxLag: ms(1500)}, 0, -1},
		// 5% slow: 150 ms behind at the end, every send after the first
		// 20 ms late.
		{"5% slow", results.Pacing{Sent: 5700, Late: 5660, MaxLag: ms(150)}, 0, -1},
		// A 60 ms stall near the end: 120 sends late, 120 excused.
		{"stall", results.Pacing{Sent: 5880, Late: 120, MaxLag: ms(60)}, 0, 120},
		{"idle", results.Pacing{Sent: 6000, Late: 3, MaxLag: ms(0.4)}, 0, 6},
		// A test's own 500 ms stall (or one a Probe saw) widens the bound
		// by itself only.
		{"designed", results.Pacing{Sent: 800, Late: 99, MaxLag: ms(520)}, 500 * time.Millisecond, 1040},
		{"past designed", results.Pacing{Sent: 800, Late: 99, MaxLag: ms(520 + 600)}, 500 * time.Millisecond, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := c.p
			if c.name == "past designed" || c.name == "half rate" {
				// past any bound, -race or not
				p.MaxLag += results.Duration(time.Second)
			}
			want := c.want
			if c.name == "5% slow" && race.Enabled {
				// Under -race the machine's stall may be 500 ms
				// (MaxStall): a 150 ms lag is within it, and its 300
				// sends are excused. Without -race it is an error.
				want = 300
			}
			n, err := ratecheck.Short(&p, 2000, 6, c.designed)
			if want < 0 {
				if err == nil {
					t.Fatalf("excused %d missing sends of %+v", n, p)
				}
				return
			}
			if err != nil || n != want {
				t.Fatalf("Short = %d, %v; want %d", n, err, want)
			}
		})
	}
	if _, err := ratecheck.Short(nil, 2000, 6, 0); err == nil {
		t.Error("no pacing excused")
	}
}

// -R 2000 for 3 s within 2%: a stall of the machine shorter than 2% of the
// run widens nothing; a longer one (the test's own or one a Probe saw)
// excuses the sends it spans.
func TestAchieved(t *testing.T) {
	ms := func(n float64) results.Duration { return results.Duration(n * float64(time.Millisecond)) }
	for _, c := range []struct {
		name    string
		p       results.Pacing
		excused time.Duration
		ok      bool
	}{
		{"idle", results.Pacing{Achieved: 1999.5, MaxLag: ms(0.4)}, 0, true},
		{"2% short", results.Pacing{Achieved: 1960.5, MaxLag: ms(0.4)}, 0, true},
		{"2.5% short, no lag", results.Pacing{Achieved: 1950, MaxLag: ms(0.4)}, 0, false},
		// A 90 ms lag spans 180 sends, 3%: the old bound (2% plus the
		// lag's share) let 4% short pass.
		{"4% short, 90 ms lag", results.Pacing{Achieved: 1920, MaxLag: ms(90)}, 0, false},
		{"3% short, 90 ms lag", results.Pacing{Achieved: 1941, MaxLag: ms(90)}, 0, true},
		// A 300 ms stall a Probe saw: 600 sends, 10%.
		{"stall seen", results.Pacing{Achieved: 1820, MaxLag: ms(300)}, 300 * time.Millisecond, true},
		{"3% over", results.Pacing{Achieved: 2060, MaxLag: ms(0.4)}, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := ratecheck.Achieved(&c.p, 2000, 3*time.Second, 0.02, 6, c.excused)
			if c.ok && err != nil {
				t.Errorf("%+v: %v", c.p, err)
			}
			if !c.ok && err == nil {
				t.Errorf("%+v passed", c.p)
			}
		})
	}
}

// The probe sees a stall of the process: here the whole process stopped
// for 150 ms by another (SIGSTOP, then SIGCONT), as a busy machine or a
// VM's steal stops it.
func TestProbeSeesStall(t *testing.T) {
	pr := ratecheck.StartProbe()
	stopper := exec.Command("sh", "-c", fmt.Sprintf("kill -STOP %d; sleep 0.15; kill -CONT %d", os.Getpid(), os.Getpid()))
	if err := stopper.Run(); err != nil {
		t.Fatal(err)
	}
	if got := pr.Stop(); got < 100*time.Millisecond {
		t.Fatalf("probe saw a %v stall, the process was stopped 150 ms", got)
	}
}
