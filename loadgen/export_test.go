package loadgen

// WithLongBackoff makes every run started until restore back off up to
// the longest cap (1 s) whatever its connections, as a run of c2500 does.
func WithLongBackoff() (restore func()) {
	was := backoffPerConn
	backoffPerConn = maxBackoffCap
	return func() { backoffPerConn = was }
}
