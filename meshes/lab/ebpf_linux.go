package lab

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// bpfProgName names the ebpf mode's programs (bpftool prog list shows it).
const bpfProgName = "lg_cni_redirect"

// bpfState holds what the ebpf mode loaded: closing the links detaches
// the programs, closing the programs frees them.
type bpfState struct {
	progs []*ebpf.Program
	links []link.Link
	IDs   []ebpf.ProgramID
}

func (s *bpfState) close() error {
	var errs []error
	for _, l := range s.links {
		if err := l.Close(); err != nil {
			errs = append(errs, fmt.Errorf("lab: detach BPF program: %w", err))
		}
	}
	for _, p := range s.progs {
		p.Close()
	}
	s.links, s.progs = nil, nil
	return errors.Join(errs...)
}

// programIDs are the kernel's IDs of the lab's BPF programs (none unless
// its mode is ebpf), for checking that they are gone after Close.
func (l *Lab) programIDs() []ebpf.ProgramID {
	if l.bpf == nil {
		return nil
	}
	return l.bpf.IDs
}

// localPod is what a node's program knows of one of its pods.
type localPod struct {
	ip              [4]byte
	hostIfindex     int // the node's end of the pod's veth
	podMAC, hostMAC net.HardwareAddr
}

// Offsets in struct __sk_buff (include/uapi/linux/bpf.h) and in an
// Ethernet + IPv4 (no options) + TCP frame.
const (
	skbData    = 76
	skbDataEnd = 80
	offEthType = 12
	offIPVHL   = 14
	offIPProto = 23
	offIPDst   = 30
	offSrcPort = 34
	minFrame   = 38 // through the source port

	tcActOK = 0
)

// le32 is how a 32-bit load sees these four packet bytes on this machine.
func le32(b []byte) int32 { return int32(binary.NativeEndian.Uint32(b)) }
func le16(b []byte) int32 { return int32(binary.NativeEndian.Uint16(b)) }

// redirectProgram is a node's tc program, Cilium's datapath in miniature:
// an IPv4 packet for one of the node's pods has its Ethernet addresses
// rewritten and goes straight into the pod with bpf_redirect_peer; one for
// the other node's pod subnet goes out of the uplink with
// bpf_redirect_neigh (the kernel's FIB and neighbour table fill in the next
// hop). Neither passes the node's IP stack, netfilter or conntrack.
// Everything else goes to the stack: ARP, packets for the node itself, and
// Services, whose DNAT kube-proxy's iptables does (a Service endpoint's
// replies, from TargetPort, go to the stack too, so conntrack can undo it).
func redirectProgram(pods []localPod, remote netip.Prefix, uplink int) asm.Instructions {
	var port [2]byte
	binary.BigEndian.PutUint16(port[:], TargetPort)
	var ethIPv4 [2]byte
	binary.BigEndian.PutUint16(ethIPv4[:], unix.ETH_P_IP)
	mask := net.CIDRMask(remote.Bits(), 32)
	netAddr := remote.Masked().Addr().As4()

	insns := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.LoadMem(asm.R2, asm.R6, skbData, asm.Word),
		asm.LoadMem(asm.R3, asm.R6, skbDataEnd, asm.Word),
		asm.Mov.Reg(asm.R4, asm.R2),
		asm.Add.Imm(asm.R4, minFrame),
		asm.JGT.Reg(asm.R4, asm.R3, "pass"),
		asm.LoadMem(asm.R5, asm.R2, offEthType, asm.Half),
		asm.JNE.Imm32(asm.R5, le16(ethIPv4[:]), "pass"),
		asm.LoadMem(asm.R5, asm.R2, offIPVHL, asm.Byte),
		asm.JNE.Imm32(asm.R5, 0x45, "pass"), // IPv4 without options
		asm.LoadMem(asm.R5, asm.R2, offIPProto, asm.Byte),
		asm.JNE.Imm32(asm.R5, unix.IPPROTO_TCP, "dst"),
		asm.LoadMem(asm.R5, asm.R2, offSrcPort, asm.Half),
		asm.JEq.Imm32(asm.R5, le16(port[:]), "pass"), // a Service endpoint's reply
		asm.LoadMem(asm.R7, asm.R2, offIPDst, asm.Word).WithSymbol("dst"),
	}
	for i, p := range pods {
		insns = append(insns, asm.JEq.Imm32(asm.R7, le32(p.ip[:]), fmt.Sprintf("pod%d", i)))
	}
	insns = append(insns,
		asm.Mov.Reg(asm.R8, asm.R7),
		asm.And.Imm32(asm.R8, le32(mask)),
		asm.JEq.Imm32(asm.R8, le32(netAddr[:]), "remote"),
		asm.Mov.Imm(asm.R0, tcActOK).WithSymbol("pass"),
		asm.Return(),
	)
	for i, p := range pods {
		insns = append(insns,
			// Destination MAC: the pod's eth0; source: the node's veth end.
			asm.StoreImm(asm.R2, 0, int64(le32(p.podMAC[0:4])), asm.Word).WithSymbol(fmt.Sprintf("pod%d", i)),
			asm.StoreImm(asm.R2, 4, int64(le16(p.podMAC[4:6])), asm.Half),
			asm.StoreImm(asm.R2, 6, int64(le16(p.hostMAC[0:2])), asm.Half),
			asm.StoreImm(asm.R2, 8, int64(le32(p.hostMAC[2:6])), asm.Word),
			asm.Mov.Imm(asm.R1, int32(p.hostIfindex)),
			asm.Mov.Imm(asm.R2, 0),
			asm.FnRedirectPeer.Call(),
			asm.Return(),
		)
	}
	insns = append(insns,
		asm.Mov.Imm(asm.R1, int32(uplink)).WithSymbol("remote"),
		asm.Mov.Imm(asm.R2, 0),
		asm.Mov.Imm(asm.R3, 0),
		asm.Mov.Imm(asm.R4, 0),
		asm.FnRedirectNeigh.Call(),
		asm.Return(),
	)
	return insns
}

// attachPrograms loads each node's program and attaches it (tcx ingress)
// to the node's ends of its pods' veths and to its uplink.
func attachPrograms(l *Lab) (*bpfState, error) {
	st := &bpfState{}
	for _, n := range nodeSides {
		var pods []localPod
		for _, p := range l.pods() {
			if p.node != n.short {
				continue
			}
			lp := localPod{ip: netip.MustParseAddr(p.ip).As4()}
			var err error
			if lp.podMAC, err = net.ParseMAC(p.podMAC); err != nil {
				return st, err
			}
			if lp.hostMAC, err = net.ParseMAC(p.hostMAC); err != nil {
				return st, err
			}
			pods = append(pods, lp)
		}
		devs := []string{underlayDev}
		for _, p := range l.pods() {
			if p.node == n.short {
				devs = append(devs, hostVeth(p.short))
			}
		}
		err := inNetns(l.ns(n.short), func() error {
			idx := map[string]int{}
			for _, d := range devs {
				ifc, err := net.InterfaceByName(d)
				if err != nil {
					return err
				}
				idx[d] = ifc.Index
			}
			for i := range pods {
				pods[i].hostIfindex = idx[devs[i+1]]
			}
			prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
				Name: bpfProgName, Type: ebpf.SchedCLS, License: "Dual MIT/GPL",
				Instructions: redirectProgram(pods, netip.MustParsePrefix(n.peerNet), idx[underlayDev]),
			})
			if err != nil {
				return fmt.Errorf("load the tc program: %w", err)
			}
			st.progs = append(st.progs, prog)
			if info, err := prog.Info(); err == nil {
				if id, ok := info.ID(); ok {
					st.IDs = append(st.IDs, id)
				}
			}
			for _, d := range devs {
				lk, err := link.AttachTCX(link.TCXOptions{Interface: idx[d], Program: prog, Attach: ebpf.AttachTCXIngress})
				if err != nil {
					return fmt.Errorf("attach the tc program to %s: %w", d, err)
				}
				st.links = append(st.links, lk)
			}
			return nil
		})
		if err != nil {
			return st, fmt.Errorf("lab: ebpf on %s: %w", l.ns(n.short), err)
		}
	}
	return st, nil
}

// bpfAvailable loads a program that passes every packet and attaches it to
// dev in ns, then removes it: whether the kernel has tcx sched_cls.
func bpfAvailable(ns, dev string) error {
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Name: "lg_cni_probe", Type: ebpf.SchedCLS, License: "Dual MIT/GPL",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, tcActOK), asm.Return()},
	})
	if err != nil {
		return fmt.Errorf("cannot load a sched_cls program (CONFIG_BPF_SYSCALL, CONFIG_NET_CLS_BPF; root): %w", err)
	}
	defer prog.Close()
	return inNetns(ns, func() error {
		ifc, err := net.InterfaceByName(dev)
		if err != nil {
			return err
		}
		lk, err := link.AttachTCX(link.TCXOptions{Interface: ifc.Index, Program: prog, Attach: ebpf.AttachTCXIngress})
		if err != nil {
			return fmt.Errorf("cannot attach a tcx program (Linux 6.6 or later, CONFIG_NET_XGRESS): %w", err)
		}
		return lk.Close()
	})
}

// inNetns runs fn on a thread inside the network namespace ns. If the
// thread cannot go back, it is left locked, so the runtime ends it instead
// of reusing it in ns.
func inNetns(ns string, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer orig.Close()
		target, err := os.Open(NetnsFile(ns))
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("setns %s: %w", ns, err)
			return
		}
		ferr := fn()
		if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- errors.Join(ferr, fmt.Errorf("setns back: %w", err))
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}
