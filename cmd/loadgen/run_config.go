package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"loadgen/loadgen"
	"loadgen/loadgen/client"
	"loadgen/loadgen/mix"
	"loadgen/loadgen/protocol"
	"loadgen/results"
	"loadgen/results/report"
)

// wrkFlags are wrk's and wrk2's report flags as given.
func (f *runFlags) wrkFlags() report.WrkFlags {
	return report.WrkFlags{Latency: f.latency, Spectrum: f.spectrum, Uncorrected: f.uncorrected, Open: f.rate != "", Percentiles: f.pcts}
}

// wrkOptions are the parts of wrk's summary the flags ask for.
func (f *runFlags) wrkOptions() report.WrkOptions { return f.wrkFlags().Options() }

// config turns the flags into the engine's configuration.
func (f *runFlags) config(cmd *cobra.Command, target string) (c loadgen.Config, err error) {
	if err := loadgen.CheckTimeout(f.timeout); err != nil {
		return c, err // the engine's 0 is its default, which the flag shows: a 0 given is a mistake
	}
	c.Target = target
	c.Driver = f.driver
	c.Method = f.method
	c.Connections = f.connections
	c.Threads = f.threads
	c.Duration = results.Duration(f.duration)
	c.Requests = f.requests
	c.Warmup = results.Duration(f.warmup)
	c.Timeout = results.Duration(f.timeout)
	c.NewConn = f.newConn
	c.Headers = f.headers
	c.Streams = f.streams
	c.Size = f.size
	c.Labels = f.labels
	c.Slack = f.slack
	c.Procs = f.cpus // setProcs makes it the run's, from this machine's CPUs
	given := func(name string) bool { return cmd.Flags().Changed(name) }
	if err := c.Normalize(loadgen.Given{Threads: given("threads"), Duration: given("duration"), Requests: given("requests"),
		Streams: given("streams"), Slack: true, Body: f.body != "", BodyFile: f.bodyFile != "",
		Rate: f.rate, Conns: f.connSchedule, Arrival: f.arrival.process, Jitter: f.arrival.jitter}); err != nil {
		return c, err
	}
	f.threads, f.streams, f.method = c.Threads, c.Streams, c.Method // what run.go reads after
	if err := f.wrkFlags().Check(); err != nil {
		return c, err
	}
	if err := c.CheckNewConn(); err != nil {
		return c, err
	}
	return c, c.Validate()
}

// readTargets reads --targets, a request mix, if given.
func (f *runFlags) readTargets(stdin io.Reader) error {
	if f.targets == "" {
		return nil
	}
	err := client.CheckMixRequest(f.method, f.body != "" || f.bodyFile != "")
	if err != nil {
		return err
	}
	if f.targets == "-" {
		src, rerr := io.ReadAll(stdin)
		if rerr != nil {
			return fmt.Errorf("--targets: %w", rerr)
		}
		f.mix, err = mix.Parse("stdin", src, os.ReadFile)
	} else {
		f.mix, err = mix.Load(f.targets)
	}
	if err != nil {
		return err
	}
	return f.mix.CheckFields(f.feedRows)
}

// readFeed reads --feed, the CSV rows of {{row.COLUMN}}, if given.
func (f *runFlags) readFeed() error {
	if f.feed == "" {
		return nil
	}
	src, err := os.ReadFile(f.feed)
	if err != nil {
		return fmt.Errorf("--feed: %w", err)
	}
	f.feedRows, err = protocol.ParseFeed(f.feed, src)
	if err != nil {
		return fmt.Errorf("--feed %w", err)
	}
	return nil
}

func (f *runFlags) readBody() ([]byte, error) {
	if f.bodyFile != "" {
		b, err := os.ReadFile(f.bodyFile)
		if err != nil {
			return nil, fmt.Errorf("--body-file: %w", err)
		}
		return b, nil
	}
	if f.body != "" {
		return []byte(f.body), nil
	}
	return nil, nil
}
