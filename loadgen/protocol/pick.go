package protocol

// A request mix (loadgen run --targets): a protocol's Dialer holds a list
// of requests, built once, and the engine picks which one each request
// sends — by weight, from the run's request index, so that the shares are
// exact and nothing is drawn at random — and keeps statistics by name.
// The protocol only switches to the request picked: Pick allocates
// nothing, and without a mix it is never called.

// Picker is a Conn or a Session of a Dialer that holds a request mix:
// Pick chooses, by its index in the list, the request that the next Do
// (or Request) sends.
type Picker interface {
	Pick(i int)
}

// MuxPicker is a Mux of a Dialer that holds a request mix: Pick chooses
// the request that slot k's next Start sends.
type MuxPicker interface {
	Pick(k, i int)
}
