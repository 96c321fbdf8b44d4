package h2wire_test

import (
	"fmt"

	"loadgen/loadgen/protocol/h2wire"
)

// A request's header blocks are encoded once; the first request on a
// connection adds the fields to the server's table, the later ones refer
// to them.
func ExampleEncodeRequest() {
	b := h2wire.EncodeRequest([]h2wire.Field{
		{Name: ":method", Value: "GET"},
		{Name: ":scheme", Value: "http"},
		{Name: ":authority", Value: "127.0.0.1:8080"},
		{Name: ":path", Value: "/bytes/100"},
	}, h2wire.DefaultTableSize)
	frame := h2wire.AppendHeaders(nil, 1, true, h2wire.DefaultMaxFrame, nil, b.Steady)
	fmt.Printf("first %d bytes, steady % x, table %d bytes\n", len(b.First), b.Steady, b.Size)
	fmt.Printf("HEADERS frame % x\n", frame)
	// Output:
	// first 23 bytes, steady 82 86 bf be, table 103 bytes
	// HEADERS frame 00 00 04 01 05 00 00 00 01 82 86 bf be
}

// A Decoder reports only the fields its caller names, here from a
// response that adds content-type and grpc-status to the table and one
// that refers to them.
func ExampleDecoder() {
	d := h2wire.NewDecoder(h2wire.DefaultTableSize, ":status", "grpc-status")
	first := []byte{0x88}                        // :status 200, from the static table
	first = append(first, 0x40|31, 16)           // content-type, added to the table,
	first = append(first, "application/grpc"...) // its value
	first = append(first, 0x40, 11)              // a new name, added to the table:
	first = append(first, "grpc-status"...)      // grpc-status,
	first = append(first, 1, '0')                // its value
	later := []byte{0x88, 0x80 | 63, 0x80 | 62}  // :status 200, the older entry, the newer
	for _, block := range [][]byte{first, later} {
		err := d.Decode(block, func(name int, value []byte) {
			fmt.Printf("%d %s ", name, value)
		})
		fmt.Println(err)
	}
	// Output:
	// 0 200 1 0 <nil>
	// 0 200 1 0 <nil>
}
