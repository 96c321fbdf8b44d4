package tcpecho_test

import (
	"fmt"
	"io"
	"net"

	"loadgen/targets/tcpecho"
)

func Example() {
	s, err := tcpecho.New(tcpecho.Config{Addr: "127.0.0.1:0"})
	if err != nil {
		panic(err)
	}
	if err := s.Start(); err != nil {
		panic(err)
	}
	defer s.Close()

	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		panic(err)
	}
	defer c.Close()
	c.Write([]byte("ping\n"))
	got := make([]byte, 5)
	io.ReadFull(c, got)
	fmt.Printf("%q, accepted %d\n", got, s.Accepted())
	// Output: "ping\n", accepted 1
}
