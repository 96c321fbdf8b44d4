package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"loadgen/meshes/layout"
	"loadgen/meshes/sidecar"
)

// meshCapture holds the flags of `mesh capture`: istio-iptables' own,
// under long names.
type meshCapture struct {
	outboundPort, inboundPort uint16
	uid, gid                  uint32
	excludeIn, excludeOut     string
	includeOutPorts           string
	includeOut, excludeOutIPs string
	print                     bool
}

func newMeshCaptureCmd() *cobra.Command {
	var c meshCapture
	cmd := &cobra.Command{
		Use:   "capture",
		Short: "Install Istio's sidecar capture (iptables NAT rules) in this network namespace",
		Long: fmt.Sprintf(`Write the nat table Istio's istio-iptables writes into the network namespace
loadgen runs in: every inbound TCP connection redirected to the sidecar's
inbound port (%d), the pod's outbound connections to its outbound port
(%d), the sidecar's own traffic (UID and GID %d) left alone. The same
rules as loadgen's local sidecars (loadgen sweep's sidecar paths).

It is the init container of the pods 'loadgen k8s run --mesh sidecar'
renders: it runs as root with NET_ADMIN and NET_RAW, from an image that has
iptables-restore (loadgen's image does). Rules are added, nothing else in the
table is touched.

Each list flag is istio-iptables' flag of the same meaning: -d
--exclude-inbound-ports, -o --exclude-outbound-ports, -q
--include-outbound-ports, -i --include-outbound-ip-ranges ("*" for every
address, "" for none), -x --exclude-outbound-ip-ranges.`, layout.InboundPort, layout.OutboundPort, layout.ProxyUID),
		Example: `  loadgen mesh capture --print
  loadgen mesh capture --exclude-inbound-ports 15090,15021,15020,8081
  loadgen mesh capture --include-outbound-ip-ranges "" --include-outbound-ports 8080 \
    --exclude-outbound-ports 8081`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			capt, err := c.capture()
			if err != nil {
				return err
			}
			if c.print {
				_, err := cmd.OutOrStdout().Write(capt.Rules())
				return err
			}
			if err := capt.Install(cmd.Context()); err != nil {
				return failf("%v", err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "capture installed: inbound to %d, outbound to %d, UID %d and GID %d exempt\n",
				capt.InboundPort, capt.OutboundPort, capt.ProxyUID, capt.ProxyGID)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.Uint16Var(&c.outboundPort, "outbound-port", layout.OutboundPort, "where outbound connections are redirected (-p)")
	fl.Uint16Var(&c.inboundPort, "inbound-port", layout.InboundPort, "where inbound connections are redirected (-z)")
	fl.Uint32Var(&c.uid, "proxy-uid", layout.ProxyUID, "the sidecar's UID: its connections are not captured (-u)")
	fl.Uint32Var(&c.gid, "proxy-gid", layout.ProxyGID, "the sidecar's GID (-g)")
	fl.StringVar(&c.excludeIn, "exclude-inbound-ports", sidecar.JoinPorts(sidecar.IstioCapture.ExcludeInbound), "inbound ports left uncaptured (-d)")
	fl.StringVar(&c.excludeOut, "exclude-outbound-ports", "", "outbound ports left uncaptured, comma-separated, e.g. 5432,6379 (-o; default none)")
	fl.StringVar(&c.includeOutPorts, "include-outbound-ports", "", "outbound ports captured whatever the address, comma-separated, e.g. 8080 (-q; default none)")
	fl.StringVar(&c.includeOut, "include-outbound-ip-ranges", "*", `outbound CIDRs captured: "*" every address, "" none (-i)`)
	fl.StringVar(&c.excludeOutIPs, "exclude-outbound-ip-ranges", "", "outbound CIDRs left uncaptured, comma-separated, e.g. 10.0.0.0/8 (-x; default none)")
	fl.BoolVar(&c.print, "print", false, "print the iptables-restore input instead of installing it")
	return cmd
}

// capture is the Capture the flags describe.
func (c meshCapture) capture() (sidecar.Capture, error) {
	return sidecar.ParseCaptureFlags(sidecar.Capture{OutboundPort: c.outboundPort, InboundPort: c.inboundPort, ProxyUID: c.uid, ProxyGID: c.gid},
		sidecar.CaptureFlags{ExcludeInbound: c.excludeIn, ExcludeOutbound: c.excludeOut, IncludeOutboundPorts: c.includeOutPorts,
			IncludeOutbound: c.includeOut, ExcludeOutboundCIDRs: c.excludeOutIPs})
}
