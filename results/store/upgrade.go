package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"loadgen/results"
	"loadgen/results/hist"
)

// Schema 4 added every latency's p95: upgrade reads it from the run's
// histograms (addP95).
//
// Schema 3 changed how times are written, not what the figures mean: a
// file of schema 1 or 2 wrote them as Go duration strings ("92.159µs",
// "3s") under keys without a unit ("p50", "duration") and CPU time under
// "_seconds" keys. upgrade rewrites such a document's raw JSON into schema
// 3's keys and numbers before it is decoded, so every reader (report,
// compare, merge, a sweep's resume) reads old files as new ones.

// unit is how an old key's duration is written under its new key.
type unit struct {
	key string                        // the new key
	fmt func(results.Duration) string // nil: the value is a number already, only renamed
}

func us(key string) unit   { return unit{key, results.FormatMicros} }
func sec(key string) unit  { return unit{key, results.FormatSeconds} }
func same(key string) unit { return unit{key, nil} }

var (
	configKeys  = map[string]unit{"duration": sec("duration_s"), "warmup": sec("warmup_s"), "timeout": us("timeout_us")}
	summaryKeys = map[string]unit{"duration": sec("duration_s"), "last_ok": sec("last_ok_s"),
		"outage": sec("outage_s"), "outage_at": sec("outage_at_s")}
	latencyKeys = map[string]unit{"min": us("min_us"), "mean": us("mean_us"), "stdev": us("stdev_us"), "max": us("max_us"),
		"p50": us("p50_us"), "p75": us("p75_us"), "p90": us("p90_us"), "p99": us("p99_us"),
		"p99_9": us("p99_9_us"), "p99_99": us("p99_99_us")}
	pacingKeys  = map[string]unit{"max_lag": us("max_lag_us")}
	costKeys    = map[string]unit{"cpu_seconds": same("cpu_s"), "user_seconds": same("user_s"), "sys_seconds": same("sys_s")}
	watchedKeys = map[string]unit{"cpu_seconds": same("cpu_s"), "covered_seconds": same("covered_s")}
	// summaryLatencies are the Summary's Latency objects.
	summaryLatencies = []string{"latency", "uncorrected", "succeeded", "failed", "connect"}
)

// upgrade rewrites b, a document of an older schema than
// results.SchemaVersion, into the current format.
func upgrade(b []byte, schema int) ([]byte, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber() // counts and figures pass through as written
	var doc map[string]any
	if err := d.Decode(&doc); err != nil {
		return nil, err
	}
	if err := upgradeDoc(doc, schema); err != nil {
		return nil, err
	}
	return json.Marshal(doc)
}

// upgradeDoc rewrites a run's, a step's or a manifest's keys in place.
// Every rename is of a key only older schemas have, so a document already
// in the current format (the merge of schema-1 runs, which keeps their
// schema) passes unchanged.
func upgradeDoc(doc map[string]any, schema int) error {
	if schema == 2 || schema == 3 {
		// The figures mean what they do in schema 4. Version 1's latency
		// counted successful requests only: it stays 1, so that merge
		// refuses to add it to a later run.
		doc["schema"] = json.Number(fmt.Sprint(results.SchemaVersion))
	}
	defer addP95(doc) // schema 4's p95, once the keys are schema 4's
	// A run (loadgen run --json, or a step's).
	if err := rename(object(doc, "config"), configKeys, "config"); err != nil {
		return err
	}
	if s := object(doc, "summary"); s != nil {
		if err := rename(s, summaryKeys, "summary"); err != nil {
			return err
		}
		for _, k := range summaryLatencies {
			if err := rename(object(s, k), latencyKeys, "summary."+k); err != nil {
				return err
			}
		}
		if err := rename(object(s, "pacing"), pacingKeys, "summary.pacing"); err != nil {
			return err
		}
	}
	if err := rename(object(doc, "generator"), costKeys, "generator"); err != nil {
		return err
	}
	// A step: its watched processes and its run, of its own schema.
	if ws, ok := doc["watched"].([]any); ok {
		for i, w := range ws {
			if w, ok := w.(map[string]any); ok {
				if err := rename(w, watchedKeys, fmt.Sprintf("watched[%d]", i)); err != nil {
					return err
				}
			}
		}
	}
	if run := object(doc, "run"); run != nil {
		rs := schema
		if n, ok := run["schema"].(json.Number); ok {
			if v, err := n.Int64(); err == nil {
				rs = int(v)
			}
		}
		if rs < results.SchemaVersion {
			if err := upgradeDoc(run, rs); err != nil {
				return fmt.Errorf("run.%w", err)
			}
		}
	}
	return nil
}

// addP95 gives a run's summary latencies the p95 schema 4 added, read
// from the run's histogram of each (histograms.latency for
// summary.latency …). A latency without its histogram is left without.
func addP95(doc map[string]any) {
	s, hs := object(doc, "summary"), object(doc, "histograms")
	for _, k := range summaryLatencies {
		l := object(s, k)
		enc, _ := hs[k].(string)
		if l == nil || enc == "" || l["p95_us"] != nil {
			continue
		}
		if h, err := hist.Decode(enc); err == nil && h.Count() > 0 {
			l["p95_us"] = json.Number(results.FormatMicros(results.Duration(h.Quantile(0.95))))
		}
	}
}

// object is doc[key] when it is a JSON object, else nil.
func object(doc map[string]any, key string) map[string]any {
	if doc == nil {
		return nil
	}
	o, _ := doc[key].(map[string]any)
	return o
}

// rename moves obj's old keys to their new ones, converting durations.
// A new key already present wins.
func rename(obj map[string]any, keys map[string]unit, where string) error {
	for old, u := range keys {
		v, ok := obj[old]
		if !ok {
			continue
		}
		delete(obj, old)
		if _, ok := obj[u.key]; ok || v == nil {
			continue
		}
		if u.fmt != nil {
			d, err := oldDuration(v)
			if err != nil {
				return fmt.Errorf("%s.%s: %w", where, old, err)
			}
			v = json.Number(u.fmt(d))
		}
		obj[u.key] = v
	}
	return nil
}

// oldDuration reads a duration as schemas 1 and 2 wrote it, a Go string
// ("1.5ms"), or as they also read it, a number of nanoseconds.
func oldDuration(v any) (results.Duration, error) {
	switch v := v.(type) {
	case string:
		d, err := time.ParseDuration(v)
		if err != nil {
			return 0, fmt.Errorf("duration: %w", err)
		}
		return results.Duration(d), nil
	case json.Number:
		ns, err := v.Int64()
		if err != nil {
			return 0, fmt.Errorf("duration: want a string like \"1.5ms\" or nanoseconds, got %s", v)
		}
		return results.Duration(ns), nil
	}
	return 0, fmt.Errorf("duration: want a string like \"1.5ms\", got %v", v)
}
