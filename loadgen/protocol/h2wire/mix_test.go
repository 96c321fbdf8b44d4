package h2wire

import (
	"fmt"
	"testing"

	"golang.org/x/net/http2/hpack"
)

// The blocks of a mix decode to each request's fields whichever request
// goes first on a connection and in whatever order they follow; the
// shared fields are indexed (a later request refers to them in a byte),
// the others literals; every request fills the same part of the table.
func TestEncodeRequests(t *testing.T) {
	common := []Field{{":scheme", "http"}, {":authority", "127.0.0.1:8080"}}
	lists := [][]Field{
		append([]Field{{":method", "GET"}}, append(common, Field{":path", "/get?a=1"}, Field{"user-agent", "loadgen"}, Field{"x-all", "1"})...),
		append([]Field{{":method", "PUT"}}, append(common, Field{":path", "/put"}, Field{"user-agent", "loadgen"}, Field{"content-length", "4"}, Field{"x-all", "1"})...),
		// The shared fields in another order: only those in the first's
		// order are shared.
		{{":method", "GET"}, {"x-all", "1"}, {":scheme", "http"}, {":authority", "127.0.0.1:8080"}, {":path", "/"}, {"user-agent", "loadgen"}},
	}
	for _, table := range []uint32{0, 100, DefaultTableSize} {
		bs := EncodeRequests(lists, table)
		if len(bs) != len(lists) {
			t.Fatalf("%d blocks for %d requests", len(bs), len(lists))
		}
		for i := range bs {
			if bs[i].Size != bs[0].Size {
				t.Errorf("table %d: request %d fills %d bytes, request 0 %d", table, i, bs[i].Size, bs[0].Size)
			}
		}
		for first := range lists {
			dec := hpack.NewDecoder(DefaultTableSize, nil)
			dec.SetAllowedMaxDynamicTableSize(table)
			order := []int{first, 0, 1, 2, 2, 1, 0, first}
			for k, i := range order {
				block := bs[i].Steady
				if k == 0 {
					block = bs[i].First
					if table < DefaultTableSize {
						block = append(AppendTableSizeUpdate(nil, table), block...)
					}
				}
				if got, want := fmt.Sprint(decodeAll(t, dec, block)), fmt.Sprint(lists[i]); got != want {
					t.Fatalf("table %d, %d first, block %d (request %d) decodes to\n%s\nwant\n%s", table, first, k, i, got, want)
				}
				if got, want := fmt.Sprint(decodeAll(t, hpack.NewDecoder(DefaultTableSize, nil), bs[i].Literal)), fmt.Sprint(lists[i]); got != want {
					t.Fatalf("request %d's literal block decodes to %s", i, got)
				}
			}
		}
	}
	bs := EncodeRequests(lists, DefaultTableSize)
	// :authority and user-agent are shared and indexed (x-all is not: the
	// third request has it before the others); :scheme http is static.
	if want := uint32(len(":authority127.0.0.1:8080") + len("user-agentloadgen") + 2*entryOverhead); bs[0].Size != want {
		t.Errorf("the shared fields fill %d bytes, want %d", bs[0].Size, want)
	}
	if one := EncodeRequests(lists[:1], DefaultTableSize); fmt.Sprint(one[0]) != fmt.Sprint(EncodeRequest(lists[0], DefaultTableSize)) {
		t.Error("a mix of one request is not encoded as that request alone")
	}
}
