package loadgen

import (
	"time"

	"loadgen/loadgen/protocol"
	"loadgen/results"
	"loadgen/results/hist"
)

// The messages of streamed answers (a gRPC server-streaming call: one
// request, many messages back). The request's latency is the engine's as
// for any request, to the end of the answer; besides it, each message is
// timed as it arrives: the first from the request's start (its intended
// start in open loop, as the request's latency), the next ones from the
// message before. The protocol only says when each came
// (protocol.MessageSink); the engine owns the clock.

// messageStats are a shard's message statistics, under its mu.
type messageStats struct {
	count int64
	first *hist.Histogram // to each answer's first message
	gap   *hist.Histogram // between an answer's messages
}

func newMessageStats() *messageStats {
	return &messageStats{first: hist.New(), gap: hist.New()}
}

// messageClock is a worker's protocol.MessageSink: it times the messages
// of the worker's current request into its shard. The Conn calls Message
// during Do only, so the worker's writes before Do and the calls are
// ordered by the connection's lock.
type messageClock struct {
	shard     *shard
	from      time.Time // the request's start (intended, open loop)
	last      time.Time // the last message's arrival; zero before the first
	measuring bool      // the request is in the measured window
}

// Message records one message: the first from the request's start, the
// next ones from the one before. A warm-up request's count in nothing.
func (m *messageClock) Message(at time.Time) {
	if !m.measuring {
		return
	}
	s := m.shard
	s.mu.Lock()
	s.msgs.count++
	if m.last.IsZero() {
		s.msgs.first.Record(at.Sub(m.from))
	} else {
		s.msgs.gap.Record(at.Sub(m.last))
	}
	s.mu.Unlock()
	m.last = at
}

var _ protocol.MessageSink = (*messageClock)(nil)

// clockMessages readies the worker's clock for the request about to be
// sent (start), due at intended in open loop, and gives it to a new Conn.
func (w *worker) clockMessages(open bool, intended, start time.Time) {
	from := start
	if open {
		from = intended
	}
	w.msgs = messageClock{shard: w.shard, from: from, measuring: !from.Before(w.e.measure)}
	if w.msgConn != w.conn {
		if mc, ok := w.conn.(protocol.MessageConn); ok {
			mc.SetMessageSink(&w.msgs)
		}
		w.msgConn = w.conn
	}
}

// messageSummary merges the shards' message statistics over window, with
// their histograms encoded into enc; nil when the protocol's answers are
// not streams.
func (e *engine) messageSummary(window time.Duration, enc *results.Encoded) *results.Messages {
	if !e.messages {
		return nil
	}
	first, gap := hist.New(), hist.New()
	m := &results.Messages{}
	for _, sh := range e.shards {
		sh.mu.Lock()
		m.Count += sh.msgs.count
		first.Merge(sh.msgs.first)
		gap.Merge(sh.msgs.gap)
		sh.mu.Unlock()
	}
	if sec := window.Seconds(); sec > 0 {
		m.PerSec = float64(m.Count) / sec
	}
	m.First = results.Reduce(first)
	enc.MessageFirst, _ = first.Encode()
	if gap.Count() > 0 {
		g := results.Reduce(gap)
		m.Gap = &g
		enc.MessageGap, _ = gap.Encode()
	}
	return m
}
