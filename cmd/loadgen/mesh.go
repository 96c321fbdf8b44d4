package main

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/spf13/cobra"

	"loadgen/meshes/envoy"
	"loadgen/meshes/layout"
	"loadgen/meshes/mtls"
	"loadgen/meshes/nginxingress"
	"loadgen/meshes/sidecar"
)

func newMeshCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mesh",
		Short: "Service-mesh sidecars: render the proxy configs loadgen runs, install a pod's capture",
		Example: `  loadgen mesh render envoy --layout istio -o envoy.yaml
  loadgen mesh render haproxy --upstream 198.18.0.3:8080 --mtls-dir /etc/loadgen/mtls
  loadgen mesh capture --print`,
	}
	cmd.AddCommand(newMeshRenderCmd(), newMeshCaptureCmd())
	return cmd
}

// meshRender holds the flags of `mesh render`.
type meshRender struct {
	layout        string
	podIP         string
	appPort       uint16
	app           string
	upstream      string
	inboundSource string
	workers       int
	mtlsDir       string
	ingress       bool
	listen        string
	out           string
}

func newMeshRenderCmd() *cobra.Command {
	var r meshRender
	cmd := &cobra.Command{
		Use:   "render " + renderProxies("|"),
		Short: "Print the config of a proxy in the sidecar layout, validated",
		Long: fmt.Sprintf(`Render the configuration loadgen would run for one sidecar proxy, checked the
way the proxy's own project checks it (Envoy: protoc-gen-validate's
ValidateAll on the bootstrap and every typed_config; the others by the same
typed Config that Start feeds to nginx -t, haproxy -c, caddy validate).

The sidecar layout is Istio's: the inbound listener on 0.0.0.0:%d forwards
to the app on the pod IP (from %s), the outbound listener on
0.0.0.0:%d to the upstream, the admin on 127.0.0.1:%d. Envoy's
--layout appmesh uses App Mesh's ports instead (ingress %d, egress
%d, admin %d). --mtls-dir renders mutual TLS between sidecars with the
files loadgen's CA writes there (root-cert.pem, default.loadgen.crt/.key;
the server is default/httpbin).

Envoy's format follows -o: .json writes JSON, anything else YAML.`, layout.InboundPort, layout.InboundSource, layout.OutboundPort, layout.AdminPort, envoy.AppMeshIngressPort, envoy.AppMeshEgressPort, envoy.AppMeshAdminPort),
		Example: `  loadgen mesh render envoy --layout istio -o envoy.yaml
  loadgen mesh render envoy --layout appmesh -o envoy.json
  loadgen mesh render haproxy --upstream 198.18.0.3:8080 --mtls-dir /etc/loadgen/mtls
  loadgen mesh render nginx --ingress --listen 0.0.0.0:8080 --upstream httpbin:8000`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			conf, err := r.render(args[0])
			if err != nil {
				return err
			}
			if r.out == "" {
				_, err := cmd.OutOrStdout().Write(conf)
				return err
			}
			if err := writeOutput(cmd.OutOrStdout(), r.out, conf); err != nil {
				return failf("%v", err)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&r.layout, "layout", string(envoy.Istio), "envoy only: "+string(envoy.Istio)+" or "+string(envoy.AppMesh))
	fl.StringVar(&r.podIP, "pod-ip", sidecar.RenderPodIP, "the IP of the sidecar's pod")
	fl.Uint16Var(&r.appPort, "app-port", sidecar.RenderAppPort, "the port of the app in the pod")
	fl.StringVar(&r.app, "app", "", "IP:PORT the inbound side forwards to (default: --pod-ip:--app-port)")
	fl.StringVar(&r.upstream, "upstream", sidecar.RenderUpstream, "IP:PORT the outbound side forwards to (with --ingress: HOST:PORT of nginx's upstream)")
	fl.StringVar(&r.inboundSource, "inbound-source", layout.InboundSource, fmt.Sprintf("source address of the inbound side's connections to the app (%q: not bound; caddy cannot bind)", layout.NoInboundSource))
	fl.IntVar(&r.workers, "workers", 0, fmt.Sprintf("worker threads or processes (0: Istio's %d)", layout.DefaultWorkers))
	fl.StringVar(&r.mtlsDir, "mtls-dir", "", "render mutual TLS with the certificate files in this directory: root-cert.pem, default.loadgen.crt and .key (default: no TLS between the sidecars)")
	fl.BoolVar(&r.ingress, "ingress", false, "nginx only: the ingress layout (--listen → --upstream) instead of a sidecar")
	fl.StringVar(&r.listen, "listen", sidecar.RenderListen, "with --ingress: the address nginx listens on")
	fl.StringVarP(&r.out, "output", "o", "", "write the config to this file, e.g. envoy.yaml (default standard output)")
	return cmd
}

func (r meshRender) render(proxy string) ([]byte, error) {
	if err := sidecar.CheckLayout(proxy, r.ingress, r.layout); err != nil {
		return nil, err
	}
	if r.ingress {
		return nginxingress.Config{Listen: r.listen, Upstream: r.upstream}.Render()
	}
	s, err := r.sidecar(proxy)
	if err != nil {
		return nil, err
	}
	return sidecar.Render(proxy, s, sidecar.Rendering{EnvoyLayout: r.layout, PodIP: netip.MustParseAddr(r.podIP), Format: envoy.FormatOf(r.out)})
}

// renderProxies are the proxies mesh render renders, joined by sep.
func renderProxies(sep string) string {
	var names []string
	for _, p := range sidecar.RenderProxies() {
		names = append(names, string(p))
	}
	return strings.Join(names, sep)
}

// sidecar is the layout the flags describe.
func (r meshRender) sidecar(proxy string) (layout.Sidecar, error) {
	podIP, err := netip.ParseAddr(r.podIP)
	if err != nil {
		return layout.Sidecar{}, fmt.Errorf("--pod-ip %q: not an IP address", r.podIP)
	}
	up, err := netip.ParseAddrPort(r.upstream)
	if err != nil {
		return layout.Sidecar{}, fmt.Errorf("--upstream %q: want IP:PORT", r.upstream)
	}
	s := layout.Pod(podIP, r.appPort, up)
	if r.app != "" {
		if s.App, err = netip.ParseAddrPort(r.app); err != nil {
			return layout.Sidecar{}, fmt.Errorf("--app %q: want IP:PORT", r.app)
		}
	}
	if s, err = s.WithInboundSource(proxy, r.inboundSource, r.app != ""); err != nil {
		return layout.Sidecar{}, fmt.Errorf("--inbound-source %w", err)
	}
	s.Workers = r.workers
	if r.mtlsDir != "" {
		client, server := mtls.DefaultPair()
		s.MTLS = mtls.Files(r.mtlsDir, client, server)
	}
	return s, s.Validate()
}
