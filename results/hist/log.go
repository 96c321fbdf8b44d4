package hist

import (
	"io"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// LogWriter writes an HdrHistogram interval log (format 1.3), the file
// HdrHistogram's HistogramLogProcessor and log analysers read. Timestamps are
// relative to the start time written in the header; values are nanoseconds.
type LogWriter struct {
	w     *hdr.HistogramLogWriter
	start time.Time
}

// NewLogWriter writes the log header: a comment, the format version, the
// start time and the column legend.
func NewLogWriter(w io.Writer, start time.Time, comment string) (*LogWriter, error) {
	lw := hdr.NewHistogramLogWriter(w)
	ms := start.UnixMilli()
	if comment != "" {
		if err := lw.OutputComment(comment); err != nil {
			return nil, err
		}
	}
	if err := lw.OutputLogFormatVersion(); err != nil {
		return nil, err
	}
	if err := lw.OutputStartTime(ms); err != nil {
		return nil, err
	}
	if err := lw.OutputBaseTime(ms); err != nil {
		return nil, err
	}
	lw.SetBaseTime(ms)
	if err := lw.OutputLegend(); err != nil {
		return nil, err
	}
	return &LogWriter{w: lw, start: start}, nil
}

// Write appends the interval [from, to) with its histogram. A tag (no commas
// or spaces) tells series apart, e.g. "corrected" and "uncorrected".
func (l *LogWriter) Write(h *Histogram, from, to time.Time, tag string) error {
	c := h.h // the log writer reads times and tag from the histogram itself
	c.SetStartTimeMs(from.UnixMilli())
	c.SetEndTimeMs(to.UnixMilli())
	c.SetTag(tag)
	return l.w.OutputIntervalHistogram(c)
}

// ReadLog reads every interval histogram of a log written by LogWriter (or by
// any HdrHistogram tool), in order, with their tags.
func ReadLog(r io.Reader) ([]*Histogram, []string, error) {
	lr := hdr.NewHistogramLogReader(r)
	var hs []*Histogram
	var tags []string
	for {
		d, err := lr.NextIntervalHistogram()
		if err != nil {
			return hs, tags, err
		}
		if d == nil {
			return hs, tags, nil
		}
		hs = append(hs, adopt(d))
		tags = append(tags, d.Tag())
	}
}
