package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// servePage serves h on ln while a command runs (--prometheus's metrics,
// --ui's dashboard) until the server it returns is closed; an error
// serving is said on stderr, named by flag.
func servePage(ln net.Listener, h http.Handler, flag string, stderr io.Writer) *http.Server {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(stderr, "loadgen: %s: %v\n", flag, err)
		}
	}()
	return srv
}

// linger keeps a page's final state served for d after the command
// (--prometheus-hold, --ui-linger), saying so on stderr with line, and
// tells whether it waited the whole time: Ctrl-C (ctx done, before or
// during the wait) ends it.
func linger(ctx context.Context, d time.Duration, stderr io.Writer, line string) bool {
	if d <= 0 {
		return true
	}
	if ctx.Err() != nil {
		return false
	}
	fmt.Fprintln(stderr, line)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
