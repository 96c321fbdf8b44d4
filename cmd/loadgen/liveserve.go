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
// (--prometheus-hold, --ui-linger), saying so on stderr with line; Ctrl-C
// (ctx done, before or during the wait) ends it. It never changes how the
// command exits: a finished run or sweep exits with its own status.
func linger(ctx context.Context, d time.Duration, stderr io.Writer, line string) {
	if d <= 0 || ctx.Err() != nil {
		return
	}
	fmt.Fprintln(stderr, line)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
