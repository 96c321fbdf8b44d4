// Command soak measures the CPU a process takes from the others on the
// same CPU: a spinner at the lowest priority (SCHED_IDLE, run under
// `chrt --idle 0` and pinned with taskset) counts loops, and what it did
// not count while the process ran, against its rate just before and just
// after, is the CPU the process took from it — what a proxy on that CPU
// would have lost, wake-ups, context switches and interrupts included.
// netperf's "looper" CPU method works the same way.
//
//	soak spin [-every 20ms] [-for 2h]  spin; print "unix-ns loops" every
//	                             -every; stop after -for
//	soak taken FILE FROM TO      CPU-seconds taken from FILE's spinner
//	                             between unix-ns FROM and TO
//	soak wake [-n 20000] [-every 250us]  what one wake-up costs the woken
//	                             thread here, by a timer and by another
//	                             thread on its CPU: "timer-µs thread-µs"
//	soak h3load [-c 10] [-d 10s] URL  the bench's HTTP/3 peer: -c closed
//	                             loops on quic-go's own HTTP/3 client, one
//	                             QUIC connection each; wrk's layout out
//
// make bench runs one spinner on the generators' CPU for the whole bench
// and asks `taken` for each run's window.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return errors.New("usage: soak spin [-every 20ms] [-for 2h] | soak taken FILE FROM-NS TO-NS [-around 1.5s] | soak wake [-n 20000] [-every 250us] | soak h3load [-c 10] [-d 10s] URL")
	}
	switch args[0] {
	case "spin":
		fs := flag.NewFlagSet("spin", flag.ContinueOnError)
		every := fs.Duration("every", 20*time.Millisecond, "how often to print the count")
		limit := fs.Duration("for", 2*time.Hour, "stop after this long (a killed bench leaves no spinner for ever)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if *every <= 0 || *limit <= 0 {
			return errors.New("spin: -every and -for must be more than 0")
		}
		spin(*every, *limit)
		return nil
	case "taken":
		fs := flag.NewFlagSet("taken", flag.ContinueOnError)
		around := fs.Duration("around", 1500*time.Millisecond, "the spinner's baseline: its rate over this long before FROM and after TO")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if fs.NArg() != 3 {
			return errors.New("taken: want FILE FROM-NS TO-NS")
		}
		from, err1 := strconv.ParseInt(fs.Arg(1), 10, 64)
		to, err2 := strconv.ParseInt(fs.Arg(2), 10, 64)
		if err := errors.Join(err1, err2); err != nil || to <= from {
			return fmt.Errorf("taken: FROM and TO are unix nanoseconds, FROM before TO: %v", err)
		}
		f, err := os.Open(fs.Arg(0))
		if err != nil {
			return err
		}
		defer f.Close()
		samples, err := readSamples(f)
		if err != nil {
			return fmt.Errorf("%s: %w", fs.Arg(0), err)
		}
		t, err := taken(samples, from, to, around.Nanoseconds())
		if err != nil {
			return err
		}
		fmt.Printf("%.3f %.4g %.3f\n", t.Seconds, t.Rate, t.Drift)
		return nil
	case "wake":
		fs := flag.NewFlagSet("wake", flag.ContinueOnError)
		n := fs.Int("n", 20000, "wake-ups of each kind")
		every := fs.Duration("every", 250*time.Microsecond, "the timer's sleep")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		c, err := measureWake(*n, *every)
		if err != nil {
			return err
		}
		fmt.Printf("%.2f %.2f\n", float64(c.Timer.Nanoseconds())/1e3, float64(c.Thread.Nanoseconds())/1e3)
		return nil
	case "h3load":
		fs := flag.NewFlagSet("h3load", flag.ContinueOnError)
		conns := fs.Int("c", 10, "connections, each a closed loop")
		d := fs.Duration("d", 10*time.Second, "how long")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if fs.NArg() != 1 || *conns < 1 || *d <= 0 {
			return errors.New("h3load: want [-c N>0] [-d D>0] https://URL")
		}
		r, err := h3load(context.Background(), fs.Arg(0), *conns, *d)
		if err != nil {
			return fmt.Errorf("h3load: %w", err)
		}
		r.print(os.Stdout)
		return nil
	}
	return fmt.Errorf("unknown command %q: spin, taken, wake or h3load", args[0])
}

// spin counts loops for ever, printing the time and the count every so
// often. The count is read between blocks of loops: the clock is read once
// per block, so the loop itself is nearly all the spinner does.
func spin(every, limit time.Duration) {
	w := bufio.NewWriter(os.Stdout)
	var n uint64
	next := time.Now()
	for end := next.Add(limit); next.Before(end); {
		for range 1 << 14 {
			n++
		}
		if now := time.Now(); !now.Before(next) {
			fmt.Fprintf(w, "%d %d\n", now.UnixNano(), n)
			w.Flush()
			next = now.Add(every)
		}
	}
}
