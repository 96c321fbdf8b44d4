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
// its side. One request and one reply message serve the whole stream; with
// Config.Delay the messages are read as they come (pipelined).
func (e *echoService) PingPong(stream echopb.Echo_PingPongServer) error {
	e.s.streams.Add(1)
	e.s.active.Add(1)
	defer e.s.active.Add(-1)
	if e.s.cfg.Delay > 0 {
		return e.pipelined(stream)
	}
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

// ServerStream answers one Payload with in.messages messages (one when 0),
// each waiting Config.Delay first and carrying the reply body.
func (e *echoService) ServerStream(in *echopb.Payload, stream echopb.Echo_ServerStreamServer) error {
	n := int(in.GetMessages())
	switch {
	case n < 0:
		return status.Errorf(codes.InvalidArgument, "messages %d: want 0 (one) or more", n)
	case n == 0:
		n = 1
	}
	body, err := e.s.body(in)
	if err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	e.s.serverCalls.Add(1)
	ctx := stream.Context()
	out := &echopb.Payload{Body: body}
	for range n {
		if err := e.s.delay(ctx); err != nil {
			return err
		}
		e.s.sent.Add(1)
		if err := stream.SendMsg(out); err != nil {
			return err
		}
	}
	return nil
}

// ClientStream reads every message of the stream, then answers one Payload
// counting them (messages), with the last message's reply body, after
// Config.Delay.
func (e *echoService) ClientStream(stream echopb.Echo_ClientStreamServer) error {
	in := new(echopb.Payload)
	var n int32
	var body []byte
	for {
		err := stream.RecvMsg(in)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		n++
		e.s.received.Add(1)
		if body, err = e.s.body(in); err != nil {
			return status.Error(codes.InvalidArgument, err.Error())
		}
	}
	if err := e.s.delay(stream.Context()); err != nil {
		return err
	}
	e.s.clientCalls.Add(1)
	return stream.SendAndClose(&echopb.Payload{Body: body, Messages: n})
}

// pipelined is PingPong with Config.Delay: the stream's messages are read
// as they come while their replies wait out the delay, in order, each from
// its own arrival. The messages a client has in flight are then all at the
// server at once, which MaxInFlight sees.
func (e *echoService) pipelined(stream echopb.Echo_PingPongServer) error {
	type arrival struct {
		in *echopb.Payload
		at time.Time
	}
	ctx := stream.Context()
	q := make(chan arrival, 1024)
	var inFlight atomic.Int64
	var recvErr error // written before q is closed
	go func() {
		defer close(q)
		for {
			in := new(echopb.Payload)
			if err := stream.RecvMsg(in); err != nil {
				if !errors.Is(err, io.EOF) {
					recvErr = err
				}
				return
			}
			e.s.noteInFlight(inFlight.Add(1))
			select {
			case q <- arrival{in, time.Now()}:
			case <-ctx.Done():
				return
			}
		}
	}()
	out := new(echopb.Payload)
	for a := range q {
		if err := e.s.delayFrom(ctx, a.at); err != nil {
			return err
		}
		body, err := e.s.body(a.in)
		if err != nil {
			return status.Error(codes.InvalidArgument, err.Error())
		}
		out.Body = body
		e.s.messages.Add(1)
		inFlight.Add(-1)
		if err := stream.SendMsg(out); err != nil {
			return err
		}
	}
	return recvErr
}

// noteInFlight keeps the most messages seen in flight on one stream.
func (s *Server) noteInFlight(n int64) {
	for {
		m := s.maxInFlight.Load()
		if n <= m || s.maxInFlight.CompareAndSwap(m, n) {
			return
		}
	}
}

// delayFrom waits until Config.Delay after at, or until the call is
// cancelled.
func (s *Server) delayFrom(ctx context.Context, at time.Time) error {
	left := time.Until(at.Add(s.cfg.Delay))
	if left <= 0 {
		return nil
	}
	s.delayed.Add(1)
	defer s.delayed.Add(-1)
	t := time.NewTimer(left)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return status.FromContextError(ctx.Err()).Err()
	}
}
