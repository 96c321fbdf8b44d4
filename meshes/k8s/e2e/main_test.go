package e2e

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"k8s.io/klog/v2"
)

// TestMain quiets the API server's and controllers' logs: the tests' own
// messages are what a reader needs.
func TestMain(m *testing.M) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("v", "0")
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
	flag.Parse()
	if f := flag.Lookup("test.run"); f != nil && strings.Contains(f.Value.String(), "TestNode") {
		startBackgroundBuilds()
	}
	code := m.Run()
	if err := stopNode(); err != nil {
		fmt.Fprintf(os.Stderr, "the node's teardown: %v\n", err)
		code = 1
	}
	os.Exit(code)
}
