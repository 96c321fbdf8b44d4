package k8s

import "fmt"

// ProtocolH3 is `loadgen run -p h3`: HTTP/3 over QUIC, over UDP.
const ProtocolH3 = "h3"

// checkH3 refuses a step of HTTP/3 load that cannot go where it is sent:
// a URL that is not https (QUIC is always TLS), a direct port other than
// HTTP's (which goes to UDP 8443, directFor) or 8443 itself, and a mesh
// path whose proxies do not carry QUIC (carriesQUIC).
func (o Options) checkH3(l Load, steps []Step) error {
	if l.Protocol != ProtocolH3 {
		return nil
	}
	for _, st := range steps {
		if !st.UsesTarget() {
			continue
		}
		if urlScheme(st.URL) != "https" {
			return fmt.Errorf("path %s (%s): -p h3 is HTTP/3 over QUIC, always TLS: use https://%s:%d (insecure: true with loadgen's self-signed certificate)",
				st.Path, st.URL, TargetHost, urlPortOr(st.URL, PortHTTP))
		}
		if DirectURL(st.URL) {
			if p := urlPort(st.URL); p != PortHTTPDirect && p != PortHTTPSDirect {
				return fmt.Errorf("path %s (%s): the target serves HTTP/3 on its direct port UDP %d: use https://%s:%d", st.Path, st.URL,
					PortHTTPSDirect, TargetHost, PortHTTPDirect)
			}
			continue
		}
		if err := o.carriesQUIC(); err != nil {
			return fmt.Errorf("path %s (%s): %w", st.Path, st.URL, err)
		}
	}
	return nil
}

// carriesQUIC refuses a mesh whose mesh path cannot carry HTTP/3: QUIC
// is UDP, and sidecars and ztunnel capture TCP. Istio's protocol
// selection page: "Non-TCP based protocols, such as UDP, are not
// proxied. These protocols will continue to function as normal, without
// any interception by the Istio proxy". An ingress controller carries it
// when it listens QUIC on its Service's UDP 443 (Traefik with HTTP/3 on
// its websecure entry point).
func (o Options) carriesQUIC() error {
	direct := fmt.Sprintf("the direct path https://%s:%d (UDP %d) crosses no proxy and runs", TargetHost, PortHTTPDirect, PortHTTPSDirect)
	switch o.Mesh {
	case MeshIngress:
		return nil
	case MeshIstio:
		return fmt.Errorf("-p h3 through --mesh istio: QUIC is UDP, and \"Non-TCP based protocols, such as UDP, are not proxied\" (Istio's "+
			"protocol selection), so the load would go around the sidecars; measure HTTP/3 through --mesh ingress (e.g. --class traefik); %s", direct)
	case MeshLinkerd, MeshAppMesh, MeshSidecar:
		return fmt.Errorf("-p h3 through --mesh %s: QUIC is UDP and the sidecars' iptables rules capture TCP only, so the load would go around "+
			"them; measure HTTP/3 through --mesh ingress (e.g. --class traefik); %s", o.Mesh, direct)
	case MeshIstioAmbient, MeshIstioWaypoint:
		return fmt.Errorf("-p h3 through --mesh %s: QUIC is UDP and ztunnel carries TCP only (HBONE tunnels TCP connections), so the load would "+
			"go around the mesh; measure HTTP/3 through --mesh ingress (e.g. --class traefik); %s", o.Mesh, direct)
	case MeshIngressNginx:
		return fmt.Errorf("-p h3 through --mesh ingress-nginx: the controller serves no HTTP/3 (its nginx image's README: the HTTP/3 module "+
			"\"is not enough to use HTTP/3 in ingress-nginx\"); use --mesh ingress --class traefik; %s", direct)
	case MeshGateway:
		return fmt.Errorf("-p h3 through --mesh gateway: loadgen's Gateway listens plain HTTP, and HTTP/3 is always TLS; "+
			"use --mesh ingress --class traefik (its websecure entry point with HTTP/3); %s", direct)
	case MeshNone:
		return fmt.Errorf("-p h3 through --mesh none: no proxy serves HTTP/3 on the mesh port, which is plain HTTP; %s", direct)
	}
	return fmt.Errorf("-p h3 through --mesh %s: not known to carry QUIC", o.Mesh)
}

// urlPortOr is a URL's port, def when it has none.
func urlPortOr(raw string, def int) int {
	if p := urlPort(raw); p != 0 {
		return p
	}
	return def
}
