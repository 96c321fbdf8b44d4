package protocol

import "sync"

// Buffers lends buffers of one size to the connections of event loops,
// which need one only while they take in what a read brought: a buffer is
// borrowed for a turn and handed back, so 10,000 connections waiting for
// their answers hold none (over TLS, 33 KiB of ciphertext room and 16 KiB
// of plaintext each, otherwise). Unlike a sync.Pool it keeps its spare
// buffers through garbage collections, so borrowing allocates nothing
// once warm; it keeps at most keepSpare of them.
type Buffers struct {
	size  int
	mu    sync.Mutex
	spare [][]byte
}

const keepSpare = 64

// NewBuffers lends buffers of size bytes.
func NewBuffers(size int) *Buffers { return &Buffers{size: size} }

// Get lends a buffer: len 0, cap the size.
func (b *Buffers) Get() []byte {
	b.mu.Lock()
	if n := len(b.spare); n > 0 {
		p := b.spare[n-1]
		b.spare[n-1] = nil
		b.spare = b.spare[:n-1]
		b.mu.Unlock()
		return p
	}
	b.mu.Unlock()
	return make([]byte, 0, b.size)
}

// Put hands p back; p must not be used after.
func (b *Buffers) Put(p []byte) {
	if cap(p) != b.size {
		return
	}
	b.mu.Lock()
	if len(b.spare) < keepSpare {
		b.spare = append(b.spare, p[:0])
	}
	b.mu.Unlock()
}
