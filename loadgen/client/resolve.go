package client

import (
	"errors"
	"fmt"
)

// CheckMixRequest refuses a method or a body given with a request mix
// (--targets), which gives each of its requests its own: method is -m,
// body says --body or --body-file was given.
func CheckMixRequest(method string, body bool) error {
	if method != "" || body {
		return errors.New("--targets gives each request its method and body: leave out -m, --body and --body-file")
	}
	return nil
}

// ResolveTarget is where `loadgen run` sends its load: the argument, else
// fileURL (url in -f's file); with a request mix (mix: --targets given)
// neither, since its requests say where they go. It takes at most one
// argument; file names -f's file in the message when its url is refused.
func ResolveTarget(args []string, file, fileURL string, mix bool) (string, error) {
	if len(args) > 1 {
		return "", oneTarget(len(args))
	}
	url := fileURL
	if len(args) == 1 {
		url = args[0] // the command line wins
	}
	if mix {
		if len(args) > 0 {
			return "", fmt.Errorf("--targets gives the requests and where they go: leave out the URL (%s)", args[0])
		}
		if fileURL != "" {
			return "", fmt.Errorf("%s: url and --targets both say where requests go: keep one", file)
		}
		return "", nil
	}
	if url == "" {
		return "", oneTarget(len(args))
	}
	return url, nil
}

// oneTarget says run takes one target, and where else it may come from:
// -f's url, when no argument was given.
func oneTarget(n int) error {
	more := ""
	if n == 0 {
		more = ", or url in -f's file"
	}
	return fmt.Errorf("run takes one target URL (or --targets FILE%s), got %d arguments", more, n)
}
