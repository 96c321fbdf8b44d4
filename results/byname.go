package results

// NamedRequests are the figures of one name of a request mix (loadgen run
// --targets: requests named by a "# name=…" line, or by their method and
// path), counted as Summary counts every request.
type NamedRequests struct {
	Name string `json:"name"`
	// Weight is the weights of the requests of this name, summed;
	// WeightShare is its part of every name's, 0 to 1: the part of the
	// requests it was meant to get.
	Weight      int     `json:"weight"`
	WeightShare float64 `json:"weight_share"`
	// Share is the part of the requests sent in the window (every name's
	// Latency.Count) that were of this name, 0 to 1.
	Share    float64 `json:"share"`
	Requests int64   `json:"requests"` // answered (any status), as Summary.Requests
	RPS      float64 `json:"rps"`      // Requests over the window
	// Errors are its failed requests by class, and its error statuses
	// (connect: a request that opened its own connection, --new-conn).
	Errors Errors        `json:"errors"`
	Status map[int]int64 `json:"status,omitempty"` // answers by status code
	// Latency counts every request of this name sent, answered or failed,
	// as Summary.Latency does.
	Latency Latency `json:"latency"`
	// Connections is a host's connections (RequestsByHost); 0 by name.
	Connections int `json:"connections,omitempty"`
	// Histogram is Latency's histogram, encoded as Run.Histograms are:
	// what loadgen merge merges the figures by name from, exactly. Runs
	// recorded before it was kept have none.
	Histogram string `json:"histogram,omitempty"`
}
