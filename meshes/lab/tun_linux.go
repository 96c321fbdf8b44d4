package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// RunUDPTunnel forwards between the TUN device c.Dev (which must exist in
// this process's network namespace, as the lab creates it) and UDP on
// c.Listen until ctx ends, the way Flannel's udp backend does: one read
// and one send per packet, in user space. ready is called once it
// forwards; the lab waits for the line TunnelReady, which `loadgen lab udp-tunnel` prints then.
func RunUDPTunnel(ctx context.Context, c TunnelConfig, ready func()) error {
	type route struct {
		prefix netip.Prefix
		peer   *net.UDPAddr
	}
	var routes []route
	for _, r := range c.Routes {
		p, err := netip.ParsePrefix(r.Prefix)
		if err != nil {
			return err
		}
		peer, err := net.ResolveUDPAddr("udp4", r.Peer)
		if err != nil {
			return err
		}
		routes = append(routes, route{p, peer})
	}
	listen, err := net.ResolveUDPAddr("udp4", c.Listen)
	if err != nil {
		return err
	}
	tun, err := openTUN(c.Dev)
	if err != nil {
		return err
	}
	defer tun.Close()
	conn, err := net.ListenUDP("udp4", listen)
	if err != nil {
		return err
	}
	defer conn.Close()

	errc := make(chan error, 2)
	go func() { // TUN → UDP: the packet's destination picks the peer
		buf := make([]byte, 65536)
		for {
			n, err := tun.Read(buf)
			if err != nil {
				errc <- fmt.Errorf("read %s: %w", c.Dev, err)
				return
			}
			if n < 20 || buf[0]>>4 != 4 {
				continue // not IPv4: nothing the lab routes here
			}
			dst := netip.AddrFrom4([4]byte(buf[16:20]))
			for _, r := range routes {
				if r.prefix.Contains(dst) {
					// A full socket buffer drops the packet, as UDP does.
					conn.WriteToUDP(buf[:n], r.peer)
					break
				}
			}
		}
	}()
	go func() { // UDP → TUN: the kernel routes it on from the device
		buf := make([]byte, 65536)
		for {
			n, _, err := conn.ReadFromUDP(buf)
			if err != nil {
				errc <- fmt.Errorf("read UDP %s: %w", c.Listen, err)
				return
			}
			if n >= 20 && buf[0]>>4 == 4 {
				tun.Write(buf[:n])
			}
		}
	}()
	if ready != nil {
		ready()
	}
	select {
	case <-ctx.Done():
		return nil
	case err := <-errc:
		return err
	}
}

// openTUN attaches to the TUN device name (IFF_TUN, no packet info).
func openTUN(name string) (io.ReadWriteCloser, error) {
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open /dev/net/tun: %w", err)
	}
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	ifr.SetUint16(unix.IFF_TUN | unix.IFF_NO_PI)
	if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("attach to TUN device %s: %w", name, err)
	}
	// Non-blocking, so the runtime's poller serves it and Close ends a
	// pending Read.
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "/dev/net/tun:"+name)
	if f == nil {
		return nil, errors.New("bad TUN descriptor")
	}
	return f, nil
}

// diesWithParent makes a killed loadgen take its tunnels with it.
func diesWithParent() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
