package httpbin

import (
	"fmt"
	"net"
	"net/http"
	"strconv"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// startH3 serves HTTP/3 on the UDP port of tcp's number, on tcp's
// address, and has the TCP server advertise it (Alt-Svc). Called from
// Start, under mu.
func (s *Server) startH3(tcp *net.TCPAddr) error {
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: tcp.IP, Port: tcp.Port, Zone: tcp.Zone})
	if err != nil {
		return fmt.Errorf("HTTP/3 on UDP port %d (the TLS port's number): %w", tcp.Port, err)
	}
	s.h3 = &http3.Server{
		Handler:   s.router,
		TLSConfig: http3.ConfigureTLSConfig(s.cfg.TLS.Clone()),
		// 0-RTT is accepted, for clients that ask (loadgen run --0rtt):
		// every endpoint may be replayed without harm.
		QUICConfig:  &quic.Config{MaxIdleTimeout: s.cfg.IdleTimeout, MaxIncomingStreams: 1 << 10, Allow0RTT: true},
		IdleTimeout: s.cfg.IdleTimeout,
	}
	altSvc := `h3=":` + strconv.Itoa(tcp.Port) + `"; ma=86400`
	router := s.std.Handler
	s.std.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Alt-Svc", altSvc)
		router.ServeHTTP(w, r)
	})
	h3 := s.h3
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		h3.Serve(udp)
		udp.Close()
	}()
	return nil
}
