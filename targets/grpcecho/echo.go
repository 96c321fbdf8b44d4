package grpcecho

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"loadgen/targets/grpcecho/echopb"
)

// echoService implements echopb.EchoServer.
type echoService struct {
	echopb.UnimplementedEchoServer
	s *Server
}

// Unary answers one Payload.
func (e *echoService) Unary(ctx context.Context, in *echopb.Payload) (*echopb.Payload, error) {
	if err := e.s.delay(ctx); err != nil {
		return nil, err
	}
	body, err := e.s.body(in)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	e.s.calls.Add(1)
	return &echopb.Payload{Body: body}, nil
}

// PingPong answers every message with one message until the client closes
// its side. One request and one reply message serve the whole stream.
func (e *echoService) PingPong(stream echopb.Echo_PingPongServer) error {
	e.s.streams.Add(1)
	e.s.active.Add(1)
	defer e.s.active.Add(-1)
	ctx := stream.Context()
	in, out := new(echopb.Payload), new(echopb.Payload)
	for {
		if err := stream.RecvMsg(in); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if err := e.s.delay(ctx); err != nil {
			return err
		}
		body, err := e.s.body(in)
		if err != nil {
			return status.Error(codes.InvalidArgument, err.Error())
		}
		out.Body = body
		e.s.messages.Add(1)
		if err := stream.SendMsg(out); err != nil {
			return err
		}
	}
}

// delay waits Config.Delay, or until the call is cancelled.
func (s *Server) delay(ctx context.Context) error {
	if s.cfg.Delay <= 0 {
		return nil
	}
	s.delayed.Add(1)
	defer s.delayed.Add(-1)
	t := time.NewTimer(s.cfg.Delay)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return status.FromContextError(ctx.Err()).Err()
	}
}

// countingHealth is grpc's health server counting its Check calls.
type countingHealth struct {
	*health.Server
	n *atomic.Uint64
}

func (h *countingHealth) Check(ctx context.Context, in *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	h.n.Add(1)
	return h.Server.Check(ctx, in)
}
