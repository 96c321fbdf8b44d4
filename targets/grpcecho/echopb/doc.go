// Package echopb holds echo.proto, the gRPC echo, ping-pong and streaming service that
// targets/grpcecho serves and loadgen's grpc protocol calls, and the code
// protoc generates from it.
//
// To regenerate, with the tools outside go.mod:
//
//	apt-get install -y protobuf-compiler # protoc 3.21
//	GOBIN=/tmp/gobin go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
//	GOBIN=/tmp/gobin go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
//	PATH=/tmp/gobin:$PATH go generate ./targets/grpcecho/echopb
package echopb

//go:generate protoc --proto_path=. --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative echo.proto
