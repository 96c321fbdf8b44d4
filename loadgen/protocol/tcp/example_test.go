package tcp_test

import (
	"context"
	"fmt"
	"time"

	"loadgen/loadgen/protocol/tcp"
	"loadgen/targets/tcpecho"
)

func ExampleDialer() {
	target, err := tcpecho.New(tcpecho.Config{Addr: "127.0.0.1:0"})
	if err != nil {
		panic(err)
	}
	if err := target.Start(); err != nil {
		panic(err)
	}
	defer target.Close()

	d, err := tcp.NewDialer(tcp.Config{Addr: target.Addr(), Mode: tcp.RR, Size: tcp.DefaultSize})
	if err != nil {
		panic(err)
	}
	c, err := d.Dial(context.Background())
	if err != nil {
		panic(err)
	}
	defer c.Close()
	out := c.Do(context.Background(), time.Now().Add(5*time.Second))
	fmt.Printf("err %v, wrote %d, read %d, connections %d\n", out.Err, out.Written, out.Bytes, d.Opened())
	// Output: err none, wrote 1024, read 1024, connections 1
}
