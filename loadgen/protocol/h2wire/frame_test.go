package h2wire

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/net/http2"
)

// readFrames reads b as an HTTP/2 peer does: one line per frame.
func readFrames(t *testing.T, b []byte) []string {
	t.Helper()
	fr := http2.NewFramer(nil, bytes.NewReader(b))
	fr.SetMaxReadFrameSize(1 << 24)
	var got []string
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("after %q: %v", got, err)
			}
			return got
		}
		h := f.Header()
		s := fmt.Sprintf("%v/%d/%d/%#x", h.Type, h.StreamID, h.Length, uint8(h.Flags))
		switch f := f.(type) {
		case *http2.SettingsFrame:
			f.ForeachSetting(func(s2 http2.Setting) error { s += " " + s2.String(); return nil })
		case *http2.WindowUpdateFrame:
			s += fmt.Sprint(" +", f.Increment)
		case *http2.RSTStreamFrame:
			s += " " + f.ErrCode.String()
		case *http2.PingFrame:
			s += fmt.Sprintf(" %q", f.Data[:])
		case *http2.GoAwayFrame:
			s += fmt.Sprintf(" last=%d %v", f.LastStreamID, f.ErrCode)
		}
		got = append(got, s)
	}
}

// The frames written, as an HTTP/2 peer reads them.
func TestFrames(t *testing.T) {
	block := bytes.Repeat([]byte{0x82}, 40000)
	b := AppendHeaders(nil, 3, true, DefaultMaxFrame, nil, block)
	b = AppendData(b, 3, true, DefaultMaxFrame, make([]byte, 20000))
	b = AppendHeaders(b, 5, false, DefaultMaxFrame, []byte{0x3f, 0xe1, 0x1f}, block[:16383]) // prefix across frames
	b = AppendData(b, 5, true, DefaultMaxFrame, nil)
	b = AppendSettings(b, http2.Setting{ID: http2.SettingMaxFrameSize, Val: 1 << 20})
	b = AppendSettingsAck(b)
	b = AppendWindowUpdate(b, 5, 1<<31-1)
	b = AppendRSTStream(b, 5, http2.ErrCodeCancel)
	b = AppendPingAck(b, []byte("12345678"))
	b = AppendGoAway(b, 7, http2.ErrCodeEnhanceYourCalm)
	want := []string{
		"HEADERS/3/16384/0x1", "CONTINUATION/3/16384/0x0", "CONTINUATION/3/7232/0x4",
		"DATA/3/16384/0x0", "DATA/3/3616/0x1",
		"HEADERS/5/16384/0x0", "CONTINUATION/5/2/0x4",
		"DATA/5/0/0x1",
		"SETTINGS/0/6/0x0 [MAX_FRAME_SIZE = 1048576]",
		"SETTINGS/0/0/0x1",
		"WINDOW_UPDATE/5/4/0x0 +2147483647",
		"RST_STREAM/5/4/0x0 CANCEL",
		`PING/0/8/0x1 "12345678"`,
		"GOAWAY/0/8/0x0 last=7 ENHANCE_YOUR_CALM",
	}
	if got := readFrames(t, b); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("frames\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestAppendPreface(t *testing.T) {
	b := AppendPreface(nil, 1<<30)
	if !bytes.HasPrefix(b, []byte(ClientPreface)) {
		t.Fatalf("% x does not start with the preface", b)
	}
	want := "SETTINGS/0/12/0x0 [ENABLE_PUSH = 0] [INITIAL_WINDOW_SIZE = 1073741824]\nWINDOW_UPDATE/0/4/0x0 +1073676289"
	if got := strings.Join(readFrames(t, b[len(ClientPreface):]), "\n"); got != want {
		t.Errorf("preface frames\n%s\nwant\n%s", got, want)
	}
	b = AppendPreface(nil, DefaultWindow) // no WINDOW_UPDATE of 0
	if got := readFrames(t, b[len(ClientPreface):]); len(got) != 1 {
		t.Errorf("preface frames %q", got)
	}
}

func TestParseFrame(t *testing.T) {
	b := AppendFrameHeader(nil, 0x123456, http2.FrameHeaders, http2.FlagHeadersEndHeaders|http2.FlagHeadersPadded, 0x7fffffff)
	if len(b) != FrameHeaderLen {
		t.Fatalf("%d bytes", len(b))
	}
	want := FrameHeader{Length: 0x123456, Type: http2.FrameHeaders, Flags: 0xc, StreamID: 0x7fffffff}
	if fh := ParseFrameHeader(b); fh != want {
		t.Errorf("%+v, want %+v", fh, want)
	}
	b[5] |= 0x80 // the reserved bit
	if fh := ParseFrameHeader(b); fh != want {
		t.Errorf("with the reserved bit: %+v, want %+v", fh, want)
	}

	payload := func(b []byte) []byte { return b[FrameHeaderLen:] }
	if incr, ok := ParseWindowUpdate(payload(AppendWindowUpdate(nil, 1, 1000))); incr != 1000 || !ok {
		t.Errorf("WINDOW_UPDATE: %d, %v", incr, ok)
	}
	if incr, ok := ParseWindowUpdate([]byte{0xff, 0xff, 0xff, 0xff}); incr != MaxWindow || !ok {
		t.Errorf("WINDOW_UPDATE with the reserved bit: %d, %v", incr, ok)
	}
	if code, ok := ParseRSTStream(payload(AppendRSTStream(nil, 1, http2.ErrCodeRefusedStream))); code != http2.ErrCodeRefusedStream || !ok {
		t.Errorf("RST_STREAM: %v, %v", code, ok)
	}
	g := append(payload(AppendGoAway(nil, 9, http2.ErrCodeNo)), "debug data"...)
	if last, code, ok := ParseGoAway(g); last != 9 || code != http2.ErrCodeNo || !ok {
		t.Errorf("GOAWAY: %d, %v, %v", last, code, ok)
	}
	for _, p := range [][]byte{nil, {1, 2, 3}, {1, 2, 3, 4, 5}} {
		if _, ok := ParseWindowUpdate(p); ok {
			t.Errorf("WINDOW_UPDATE % x parsed", p)
		}
		if _, ok := ParseRSTStream(p); ok {
			t.Errorf("RST_STREAM % x parsed", p)
		}
		if _, _, ok := ParseGoAway(p); ok {
			t.Errorf("GOAWAY % x parsed", p)
		}
	}
}
