package httpbin

import (
	"strconv"
	"sync/atomic"
)

// counters count the responses served, one atomic counter per status code:
// a request costs one atomic add and no lock. Totals are summed on read.
type counters struct {
	byStatus [600]atomic.Uint64
	waiting  atomic.Int64 // /delay requests sleeping now
}

// add counts one response with the given status.
func (c *counters) add(status int) {
	if status < 0 || status >= len(c.byStatus) {
		status = 0
	}
	c.byStatus[status].Add(1)
}

// total is the number of responses counted so far.
func (c *counters) total() uint64 {
	var n uint64
	for i := range c.byStatus {
		n += c.byStatus[i].Load()
	}
	return n
}

// appendJSON appends the /stats document:
//
//	{"requests": 12, "waiting": 0, "status": {"200": 10, "404": 2}}
func (c *counters) appendJSON(dst []byte) []byte {
	var total uint64
	dst = append(dst, `{"requests": `...)
	mark := len(dst)
	dst = append(dst, `, "waiting": `...)
	dst = strconv.AppendInt(dst, c.waiting.Load(), 10)
	dst = append(dst, `, "status": {`...)
	first := true
	for code := range c.byStatus {
		n := c.byStatus[code].Load()
		if n == 0 {
			continue
		}
		total += n
		if !first {
			dst = append(dst, ", "...)
		}
		first = false
		dst = append(dst, '"')
		dst = strconv.AppendInt(dst, int64(code), 10)
		dst = append(dst, `": `...)
		dst = strconv.AppendUint(dst, n, 10)
	}
	dst = append(dst, "}}\n"...)
	// The total goes first but is known last: insert it at mark.
	var num [20]byte
	t := strconv.AppendUint(num[:0], total, 10)
	dst = append(dst, t...)
	copy(dst[mark+len(t):], dst[mark:len(dst)-len(t)])
	copy(dst[mark:], t)
	return dst
}
