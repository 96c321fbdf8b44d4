package h2

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2conn/h2peer"
	"loadgen/loadgen/protocol/h2wire"
)

// The scripted, frame-level HTTP/2 server is h2peer's.
type peer = h2peer.Peer

var startPeer = h2peer.Start

func fieldsOf(h *http2.MetaHeadersFrame) string {
	var b strings.Builder
	for _, f := range h.Fields {
		fmt.Fprintf(&b, "%s=%s ", f.Name, f.Value)
	}
	return b.String()
}

func TestExactBytes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		settings []http2.Setting
		header   string
		literal  bool // every request must be sent as literals
	}{
		{name: "indexed"},
		{name: "server table 0", settings: []http2.Setting{{ID: http2.SettingHeaderTableSize, Val: 0}}, literal: true},
		// A field that does not fit the table is sent as a literal, the
		// others indexed all the same.
		{name: "header over the table", header: strings.Repeat("h", 5000)},
		{name: "header over a frame", header: strings.Repeat("h", 40000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			type seen struct {
				fields  string
				written int64
				first   byte
			}
			reqs := make(chan seen, 10)
			addr := startPeer(t, tc.settings, func(p *peer) {
				if len(tc.settings) > 0 && tc.settings[0].Val == 0 {
					p.Fr.ReadMetaHeaders.SetAllowedMaxDynamicTableSize(0)
				}
				for {
					h := p.Request()
					if h == nil {
						return
					}
					written := int64(h2wire.FrameHeaderLen) + int64(h.Length)
					reqs <- seen{fieldsOf(h), written, 0}
					p.Raw(http2.FrameHeaders, http2.FlagHeadersEndHeaders, h.StreamID, []byte{0x88}) // :status 200
					p.Raw(http2.FrameData, http2.FlagDataEndStream, h.StreamID, make([]byte, 100))
				}
			})
			cfg := Config{URL: "http://" + addr + "/p?q=1", Cleartext: true}
			if tc.header != "" {
				cfg.Headers = []string{"X-Big: " + tc.header}
			}
			d, c := dial(t, cfg)
			want := ":authority=" + addr + " :method=GET :path=/p?q=1 :scheme=http user-agent=loadgen "
			if tc.header != "" {
				want += "x-big=" + tc.header + " "
			}
			for i := 0; i < 3; i++ {
				o := c.Do(context.Background(), soon())
				if o.Err != protocol.None || o.Status != 200 || o.Done {
					t.Fatalf("request %d: %+v", i, o)
				}
				if o.Bytes != 9+1+9+100 {
					t.Errorf("request %d: Bytes = %d, want %d", i, o.Bytes, 9+1+9+100)
				}
				s := <-reqs
				if got := sortFields(s.fields); got != sortFields(want) {
					t.Fatalf("request %d: server decoded %q, want %q", i, got, want)
				}
				var block []byte
				switch blocks := d.core.Blocks(); {
				case tc.literal:
					block = blocks.Literal
				case i == 0:
					block = blocks.First
				default:
					block = blocks.Steady
				}
				frames := int64(len(block)/h2wire.DefaultMaxFrame + 1)
				wantWritten := frames*h2wire.FrameHeaderLen + int64(len(block))
				if tc.settings != nil && i == 0 {
					wantWritten++ // the table size update
				}
				if tc.header == "" && o.Written != wantWritten {
					t.Errorf("request %d: Written = %d, want %d", i, o.Written, wantWritten)
				}
				if frames == 1 && o.Written != s.written {
					t.Errorf("request %d: Written = %d, the server read %d", i, o.Written, s.written)
				}
			}
		})
	}
}

func sortFields(s string) string {
	f := strings.Fields(s)
	for i := range f {
		for j := i + 1; j < len(f); j++ {
			if f[j] < f[i] {
				f[i], f[j] = f[j], f[i]
			}
		}
	}
	return strings.Join(f, " ")
}

// TestResponseFraming sends responses with every framing feature: 1xx,
// padding, priority, CONTINUATION, :status from the dynamic table, empty
// DATA, trailers.
func TestResponseFraming(t *testing.T) {
	sizes := make(chan int64, 10)
	addr := startPeer(t, nil, func(p *peer) {
		for i := 0; ; i++ {
			h := p.Request()
			if h == nil {
				return
			}
			id := h.StreamID
			var n int64
			n += p.Raw(http2.FrameHeaders, http2.FlagHeadersEndHeaders, id, p.Block(":status", "103", "link", "</style.css>"))
			block := p.Block(":status", "201", "content-type", "text/plain", "x-long", strings.Repeat("z", 100))
			a, b := len(block)/3, 2*len(block)/3
			padded := append([]byte{3, 0, 0, 0, 0, 7}, block[:a]...) // pad length, priority
			padded = append(padded, 0, 0, 0)
			n += p.Raw(http2.FrameHeaders, http2.FlagHeadersPadded|http2.FlagHeadersPriority, id, padded)
			n += p.Raw(http2.FrameContinuation, 0, id, block[a:b])
			n += p.Raw(http2.FrameContinuation, http2.FlagContinuationEndHeaders, id, block[b:])
			n += p.Raw(http2.FrameData, http2.FlagDataPadded, id, append([]byte{5}, make([]byte, 50+5)...))
			n += p.Raw(http2.FrameData, 0, id, nil)
			n += p.Raw(http2.FrameHeaders, http2.FlagHeadersEndHeaders|http2.FlagHeadersEndStream, id, p.Block("x-trailer", "t"))
			sizes <- n
		}
	})
	_, c := dial(t, Config{URL: "http://" + addr + "/", Cleartext: true})
	for i := 0; i < 3; i++ {
		o := c.Do(context.Background(), soon())
		if o.Err != protocol.None || o.Status != 201 || o.Done {
			t.Fatalf("request %d: %+v", i, o)
		}
		if n := <-sizes; o.Bytes != n {
			t.Errorf("request %d: Bytes = %d, the server sent %d", i, o.Bytes, n)
		}
	}
}

func TestFlowControl(t *testing.T) {
	const window, body = 1000, 200_000
	var mu sync.Mutex
	received := map[uint32]int{}
	addr := startPeer(t, []http2.Setting{{ID: http2.SettingInitialWindowSize, Val: window}, {ID: http2.SettingMaxFrameSize, Val: 20000}}, func(p *peer) {
		connWindow := int64(h2wire.DefaultWindow)
		streamWindow := map[uint32]int64{}
		for {
			f := p.Next()
			switch f := f.(type) {
			case nil:
				return
			case *http2.MetaHeadersFrame:
				streamWindow[f.StreamID] = window
			case *http2.DataFrame:
				n := int64(f.Length)
				if n > connWindow || n > streamWindow[f.StreamID] {
					t.Errorf("stream %d: DATA of %d bytes, windows %d (connection) and %d (stream)", f.StreamID, n, connWindow, streamWindow[f.StreamID])
				}
				connWindow -= n
				streamWindow[f.StreamID] -= n
				mu.Lock()
				received[f.StreamID] += len(f.Data())
				mu.Unlock()
				if f.StreamEnded() {
					p.Respond(f.StreamID, "200", 10)
					continue
				}
				if n > 0 { // return the window in two steps
					p.Mu.Lock()
					p.Fr.WriteWindowUpdate(0, uint32(n))
					p.Fr.WriteWindowUpdate(f.StreamID, uint32(n/2))
					p.Fr.WriteWindowUpdate(f.StreamID, uint32(n-n/2))
					p.Mu.Unlock()
					connWindow += n
					streamWindow[f.StreamID] += n
				}
			}
		}
	})
	d, err := NewDialer(Config{URL: "http://" + addr + "/", Cleartext: true, Method: "POST", Body: make([]byte, body), Streams: 3})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		c, err := d.Dial(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 3; j++ {
				o := c.Do(context.Background(), soon())
				if o.Err != protocol.None || o.Status != 200 {
					t.Errorf("%+v", o)
					return
				}
				if min := int64(body + body/window*h2wire.FrameHeaderLen); o.Written < min {
					t.Errorf("Written = %d, want at least %d", o.Written, min)
				}
			}
		}()
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(received) != 9 {
		t.Errorf("%d streams carried a body, want 9", len(received))
	}
	for id, n := range received {
		if n != body {
			t.Errorf("stream %d: %d body bytes, want %d", id, n, body)
		}
	}
}

func TestGoAway(t *testing.T) {
	eachClient(t, func(t *testing.T, cl client) {
		first, once := make(chan struct{}), sync.Once{}
		addr := startPeer(t, nil, func(p *peer) {
			a := p.Request()
			once.Do(func() { close(first) }) // the first connection's first request
			b := p.Request()
			if a == nil || b == nil {
				return
			}
			p.Respond(a.StreamID, "200", 5)
			p.Mu.Lock()
			p.Fr.WriteGoAway(a.StreamID, http2.ErrCodeNo, nil)
			p.Mu.Unlock()
			for p.Next() != nil { // until the client closes
			}
		})
		// The answered request's Bytes: its HEADERS (:status 200, indexed)
		// and DATA frames, or its body for x/net's client.
		wantBytes := int64(h2wire.FrameHeaderLen + 1 + h2wire.FrameHeaderLen + 5)
		if cl.bodyBytes {
			wantBytes = 5
		}
		d := cl.dialer(t, Config{URL: "http://" + addr + "/", Cleartext: true, Streams: 2})
		cs := dialN(t, d, 2)
		c1, c2 := cs[0], cs[1]
		done := make(chan protocol.Outcome, 2)
		go func() { done <- c1.Do(context.Background(), soon()) }()
		select { // c1 takes stream 1
		case <-first:
		case <-time.After(10 * time.Second):
			t.Fatal("c1's request never reached the peer")
		}
		go func() { done <- c2.Do(context.Background(), soon()) }()
		var ok, refused int
		for i := 0; i < 2; i++ {
			o := <-done
			switch {
			case o.Err == protocol.None && o.Status == 200 && o.Bytes == wantBytes: // Done if the GOAWAY was read by then
				ok++
			case o.Err == protocol.Read && o.Done && (o.Unsent || cl.name != "lean"):
				refused++ // the lean client says the server did not process it
			default:
				t.Errorf("%+v", o)
			}
		}
		if ok != 1 || refused != 1 {
			t.Errorf("%d answered and %d refused, want 1 and 1", ok, refused)
		}
		if o := c1.Do(context.Background(), soon()); !o.Done || o.Err != protocol.Write || (cl.name == "lean" && !o.Unsent) {
			t.Errorf("Do after GOAWAY: %+v, want Write, Unsent and Done", o)
		}
		dialN(t, d, 1)[0].Close()
		if d.Opened() != 2 {
			t.Errorf("Opened() = %d: a Dial after GOAWAY must open a new connection", d.Opened())
		}
	})
}

func TestStreamErrors(t *testing.T) {
	addr := startPeer(t, nil, func(p *peer) {
		for i := 0; ; i++ {
			h := p.Request()
			if h == nil {
				return
			}
			switch i {
			case 0:
				p.Raw(http2.FrameRSTStream, 0, h.StreamID, []byte{0, 0, 0, byte(http2.ErrCodeRefusedStream)})
			case 1:
				p.Raw(http2.FrameRSTStream, 0, h.StreamID, []byte{0, 0, 0, byte(http2.ErrCodeProtocol)})
			case 2: // a response without :status
				p.Raw(http2.FrameHeaders, http2.FlagHeadersEndHeaders|http2.FlagHeadersEndStream, h.StreamID, p.Block("x", "y"))
			case 3: // DATA before HEADERS
				p.Raw(http2.FrameData, http2.FlagDataEndStream, h.StreamID, []byte("x"))
			case 4: // a zero WINDOW_UPDATE: a stream error (RFC 9113 §6.9)
				p.Raw(http2.FrameWindowUpdate, 0, h.StreamID, []byte{0, 0, 0, 0})
			default:
				p.Respond(h.StreamID, "200", 1)
			}
		}
	})
	_, c := dial(t, Config{URL: "http://" + addr + "/", Cleartext: true})
	for i, want := range []protocol.ErrClass{protocol.Read, protocol.Protocol, protocol.Protocol, protocol.Protocol, protocol.Protocol, protocol.None} {
		if o := c.Do(context.Background(), soon()); o.Err != want || o.Done {
			t.Errorf("request %d: %+v, want %v and not Done", i, o, want)
		}
	}
}

func TestConnectionErrors(t *testing.T) {
	for name, send := range map[string]func(p *peer, id uint32){
		"DATA on stream 0":  func(p *peer, id uint32) { p.Raw(http2.FrameData, 0, 0, []byte("x")) },
		"frame on stream 2": func(p *peer, id uint32) { p.Raw(http2.FrameData, 0, 2, []byte("x")) },
		"bad HPACK":         func(p *peer, id uint32) { p.Raw(http2.FrameHeaders, http2.FlagHeadersEndHeaders, id, []byte{0x80}) },
		"PUSH_PROMISE": func(p *peer, id uint32) {
			p.Raw(http2.FramePushPromise, http2.FlagPushPromiseEndHeaders, id, []byte{0, 0, 0, 2, 0x82})
		},
		"oversized frame": func(p *peer, id uint32) { p.Raw(http2.FrameData, 0, id, make([]byte, 20000)) },
		"interleaved headers": func(p *peer, id uint32) {
			p.Raw(http2.FrameHeaders, 0, id, []byte{0x88})
			p.Raw(http2.FramePing, 0, 0, make([]byte, 8))
		},
	} {
		t.Run(name, func(t *testing.T) {
			addr := startPeer(t, nil, func(p *peer) {
				if h := p.Request(); h != nil {
					send(p, h.StreamID)
					p.Next()
				}
			})
			_, c := dial(t, Config{URL: "http://" + addr + "/", Cleartext: true})
			if o := c.Do(context.Background(), soon()); o.Err != protocol.Protocol || !o.Done {
				t.Errorf("%+v, want Protocol and Done", o)
			}
		})
	}
	t.Run("connection reset", func(t *testing.T) {
		addr := startPeer(t, nil, func(p *peer) {
			p.Request()
		})
		_, c := dial(t, Config{URL: "http://" + addr + "/", Cleartext: true})
		if o := c.Do(context.Background(), soon()); o.Err != protocol.Read || !o.Done {
			t.Errorf("%+v, want Read and Done", o)
		}
	})
}

// TestPingAndSettings checks that the server waits for the acks of its PING
// and SETTINGS before it answers, so the waiting client must send them.
func TestPingAndSettings(t *testing.T) {
	addr := startPeer(t, nil, func(p *peer) {
		for {
			h := p.Request()
			if h == nil {
				return
			}
			p.Mu.Lock()
			p.Fr.WritePing(false, [8]byte{1, 2, 3, 4, 5, 6, 7, 8})
			p.Fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 100})
			p.Mu.Unlock()
			var ping, settings bool
			for !ping || !settings {
				f, err := p.Fr.ReadFrame()
				if err != nil {
					return
				}
				switch f := f.(type) {
				case *http2.PingFrame:
					ping = f.IsAck() && f.Data == [8]byte{1, 2, 3, 4, 5, 6, 7, 8}
				case *http2.SettingsFrame:
					settings = f.IsAck()
				}
			}
			p.Respond(h.StreamID, "200", 1)
		}
	})
	_, c := dial(t, Config{URL: "http://" + addr + "/", Cleartext: true})
	for i := 0; i < 2; i++ {
		if o := c.Do(context.Background(), soon()); o.Err != protocol.None {
			t.Fatalf("%+v", o)
		}
	}
}

func TestMaxConcurrentStreams(t *testing.T) {
	const limit = 2
	var open, peak atomic.Int64
	addr := startPeer(t, []http2.Setting{{ID: http2.SettingMaxConcurrentStreams, Val: limit}}, func(p *peer) {
		for {
			h := p.Request()
			if h == nil {
				return
			}
			n := open.Add(1)
			if n > peak.Load() {
				peak.Store(n)
			}
			go func() {
				time.Sleep(time.Millisecond)
				open.Add(-1)
				p.Respond(h.StreamID, "200", 1)
			}()
		}
	})
	d, err := NewDialer(Config{URL: "http://" + addr + "/", Cleartext: true, Streams: 6})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		c, err := d.Dial(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 10; j++ {
				if o := c.Do(context.Background(), soon()); o.Err != protocol.None {
					t.Errorf("%+v", o)
					return
				}
			}
		}()
	}
	wg.Wait()
	if p := peak.Load(); p > limit {
		t.Errorf("%d streams open at once, the server allows %d", p, limit)
	}
}

// TestDialCancelWhileJoining checks that a Dial waiting for the connection
// another Dial is opening returns when its context ends; the connection still
// serves the first.
func TestDialCancelWhileJoining(t *testing.T) {
	release := make(chan struct{})
	addr := serveRaw(t, func(c net.Conn) {
		<-release // hold back the server's SETTINGS
		p := h2peer.New(t, c)
		io.ReadFull(c, make([]byte, len(h2wire.ClientPreface)))
		p.Fr.WriteSettings()
		for h := p.Request(); h != nil; h = p.Request() {
			p.Respond(h.StreamID, "200", 1)
		}
	})
	d, err := NewDialer(Config{URL: "http://" + addr + "/", Cleartext: true, Streams: 2})
	if err != nil {
		t.Fatal(err)
	}
	first := make(chan protocol.Conn)
	go func() {
		c, err := d.Dial(context.Background())
		if err != nil {
			t.Error(err)
		}
		first <- c
	}()
	for d.core.Current() == nil {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := d.Dial(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Dial: %v, want the context's error", err)
	}
	close(release)
	c := <-first
	if c == nil {
		t.FailNow()
	}
	defer c.Close()
	if o := c.Do(context.Background(), soon()); o.Err != protocol.None {
		t.Fatalf("%+v", o)
	}
	if d.Opened() != 1 {
		t.Errorf("Opened() = %d", d.Opened())
	}
}
