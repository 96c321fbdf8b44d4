package http1_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"loadgen/loadgen/protocol/http1"
)

func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s from %s", r.Method, r.URL.Path, r.UserAgent())
	}))
	defer srv.Close()

	d, err := http1.NewDialer(http1.Config{URL: srv.URL + "/hello", DialTimeout: 5 * time.Second})
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := d.Dial(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	for i := 0; i < 2; i++ {
		o := c.Do(context.Background(), time.Now().Add(5*time.Second))
		fmt.Println(o.Status, o.Err, o.Done)
	}
	// Output:
	// 200 none false
	// 200 none false
}

func ExampleConfig_Validate() {
	for _, url := range []string{"localhost:8080", "http://127.0.0.1:8080/", "https://[::1]/x"} {
		fmt.Println(http1.Config{URL: url}.Validate())
	}
	fmt.Println(http1.Config{URL: "http://h/", Headers: []string{"X-Trace 1"}}.Validate())
	// Output:
	// URL "localhost:8080" has no scheme: want http://localhost:8080 or https://…
	// <nil>
	// <nil>
	// header "X-Trace 1": want "Name: value"
}
