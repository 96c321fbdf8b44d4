package httpbin

import (
	"fmt"
	"os"
	"testing"
)

// testLoops says whether the servers the tests start serve plaintext with
// event loops (as New makes them on Linux) or with a goroutine per connection
// (as elsewhere). Where there are loops, every test runs twice, once each.
var testLoops = loopSupported

func TestMain(m *testing.M) {
	code := m.Run()
	if loopSupported && code == 0 {
		testLoops = false
		fmt.Fprintln(os.Stderr, "httpbin: every test again, a goroutine per connection")
		code = m.Run()
	}
	os.Exit(code)
}
