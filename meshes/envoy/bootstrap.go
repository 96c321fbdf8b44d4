package envoy

import (
	"fmt"
	"math"
	"net/netip"
	"time"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	originaldstv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/listener/original_dst/v3"
	tlsinspectorv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/listener/tls_inspector/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	httpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// Cluster and listener names, as each mesh calls them.
type names struct {
	inbound, outbound       string // listeners
	appCluster, upCluster   string
	inboundStat, outboundSt string // HCM stat prefixes
}

func (c Config) names() names {
	app, up := c.Sidecar.App.Port(), c.Sidecar.Upstream.Port()
	if c.Layout == AppMesh {
		return names{
			inbound:     fmt.Sprintf("lds_ingress_%s", c.Sidecar.Inbound),
			outbound:    fmt.Sprintf("lds_egress_%s", c.Sidecar.Outbound),
			appCluster:  fmt.Sprintf("cds_ingress_loadgen_loadgen_http_%d", app),
			upCluster:   fmt.Sprintf("cds_egress_loadgen_httpbin_http_%d", up),
			inboundStat: "ingress", outboundSt: "egress",
		}
	}
	return names{
		inbound:     "virtualInbound",
		outbound:    "virtualOutbound",
		appCluster:  fmt.Sprintf("inbound|%d||", app),
		upCluster:   fmt.Sprintf("outbound|%d||httpbin.default.svc.cluster.local", up),
		inboundStat: "inbound_0.0.0.0_" + fmt.Sprint(app), outboundSt: "outbound_0.0.0.0_" + fmt.Sprint(up),
	}
}

// Bootstrap builds the bootstrap of c and checks it as Envoy's own
// validation annotations do (see Check).
func (c Config) Bootstrap() (*bootstrapv3.Bootstrap, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	n := c.names()
	s := c.Sidecar
	inbound, err := c.listener(n.inbound, s.Inbound, n.inboundStat, n.appCluster, true)
	if err != nil {
		return nil, err
	}
	outbound, err := c.listener(n.outbound, s.Outbound, n.outboundSt, n.upCluster, false)
	if err != nil {
		return nil, err
	}
	listeners := []*listenerv3.Listener{outbound, inbound}
	app := cluster(n.appCluster, s.App)
	if s.InboundSource.IsValid() {
		app.UpstreamBindConfig = &corev3.BindConfig{SourceAddress: socketAddress(netip.AddrPortFrom(s.InboundSource, 0))}
	}
	up := cluster(n.upCluster, s.Upstream)
	if s.MTLS != nil {
		if up.TransportSocket, err = c.upstreamTLS(); err != nil {
			return nil, err
		}
	}
	clusters := []*clusterv3.Cluster{app, up}
	if c.Layout == Istio {
		// Istio sets every threshold to the maximum (its
		// getDefaultCircuitBreakerThresholds): with Envoy's own defaults
		// (1024 connections, pending and active requests, 3 retries) a load
		// above them would be answered 503 where Istio's proxy serves it.
		for _, cl := range clusters {
			cl.CircuitBreakers = istioCircuitBreakers()
		}
	}
	if c.Layout == Istio {
		stats, err := statsListener(c.Stats)
		if err != nil {
			return nil, err
		}
		listeners = append(listeners, stats)
		clusters = append(clusters, cluster("prometheus_stats", s.Admin))
	}
	for _, cl := range clusters {
		if cl.TypedExtensionProtocolOptions, err = http1Options(); err != nil {
			return nil, err
		}
	}
	b := &bootstrapv3.Bootstrap{
		Node:  &corev3.Node{Id: c.NodeID, Cluster: c.NodeCluster},
		Admin: &bootstrapv3.Admin{Address: address(s.Admin)},
		StaticResources: &bootstrapv3.Bootstrap_StaticResources{
			Listeners: listeners,
			Clusters:  clusters,
		},
	}
	if err := Check(b); err != nil {
		return nil, err
	}
	return b, nil
}

// listener is one HTTP listener routing everything to cluster. Captured
// connections carry their original destination, which the original_dst
// listener filter restores, as both meshes do; with mTLS, the inbound one
// requires a client certificate of the mesh's CA and forwards its details
// to the app (X-Forwarded-Client-Cert, as Istio sets it).
func (c Config) listener(name string, addr netip.AddrPort, statPrefix, cluster string, inbound bool) (*listenerv3.Listener, error) {
	mgr := &hcmv3.HttpConnectionManager{
		StatPrefix: statPrefix,
		CodecType:  hcmv3.HttpConnectionManager_AUTO,
		RouteSpecifier: &hcmv3.HttpConnectionManager_RouteConfig{RouteConfig: &routev3.RouteConfiguration{
			Name: name,
			VirtualHosts: []*routev3.VirtualHost{{
				Name:    cluster,
				Domains: []string{"*"},
				Routes: []*routev3.Route{{
					Match: &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"}},
					Action: &routev3.Route_Route{Route: &routev3.RouteAction{
						ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: cluster},
						Timeout:          durationpb.New(0), // Istio: no route timeout
					}},
				}},
			}},
		}},
	}
	router, err := anypb.New(&routerv3.Router{})
	if err != nil {
		return nil, err
	}
	mgr.HttpFilters = []*hcmv3.HttpFilter{{Name: "envoy.filters.http.router", ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: router}}}
	chain := &listenerv3.FilterChain{}
	filters := []*listenerv3.ListenerFilter{}
	od, err := typedListenerFilter("envoy.filters.listener.original_dst", &originaldstv3.OriginalDst{})
	if err != nil {
		return nil, err
	}
	filters = append(filters, od)
	if inbound && c.Sidecar.MTLS != nil {
		ti, err := typedListenerFilter("envoy.filters.listener.tls_inspector", &tlsinspectorv3.TlsInspector{})
		if err != nil {
			return nil, err
		}
		filters = append(filters, ti)
		mgr.ForwardClientCertDetails = hcmv3.HttpConnectionManager_SANITIZE_SET
		mgr.SetCurrentClientCertDetails = &hcmv3.HttpConnectionManager_SetCurrentClientCertDetails{Uri: true}
		if chain.TransportSocket, err = c.downstreamTLS(); err != nil {
			return nil, err
		}
	}
	hcm, err := anypb.New(mgr)
	if err != nil {
		return nil, err
	}
	chain.Filters = []*listenerv3.Filter{{Name: "envoy.filters.network.http_connection_manager", ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: hcm}}}
	return &listenerv3.Listener{
		Name:            name,
		Address:         address(addr),
		ListenerFilters: filters,
		FilterChains:    []*listenerv3.FilterChain{chain},
		// Istio marks both listeners so: connections redirected here keep
		// their original destination.
		TrafficDirection: direction(inbound),
	}, nil
}

func direction(inbound bool) corev3.TrafficDirection {
	if inbound {
		return corev3.TrafficDirection_INBOUND
	}
	return corev3.TrafficDirection_OUTBOUND
}

// statsListener is Istio's 15090: /stats/prometheus of the admin.
func statsListener(addr netip.AddrPort) (*listenerv3.Listener, error) {
	router, err := anypb.New(&routerv3.Router{})
	if err != nil {
		return nil, err
	}
	hcm, err := anypb.New(&hcmv3.HttpConnectionManager{
		StatPrefix: "stats",
		CodecType:  hcmv3.HttpConnectionManager_AUTO,
		RouteSpecifier: &hcmv3.HttpConnectionManager_RouteConfig{RouteConfig: &routev3.RouteConfiguration{
			VirtualHosts: []*routev3.VirtualHost{{
				Name:    "backend",
				Domains: []string{"*"},
				Routes: []*routev3.Route{{
					Match: &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/stats/prometheus"}},
					Action: &routev3.Route_Route{Route: &routev3.RouteAction{
						ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: "prometheus_stats"},
					}},
				}},
			}},
		}},
		HttpFilters: []*hcmv3.HttpFilter{{Name: "envoy.filters.http.router", ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: router}}},
	})
	if err != nil {
		return nil, err
	}
	return &listenerv3.Listener{
		Name:    "prometheus_stats",
		Address: address(addr),
		FilterChains: []*listenerv3.FilterChain{{Filters: []*listenerv3.Filter{{
			Name: "envoy.filters.network.http_connection_manager", ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: hcm},
		}}}},
	}, nil
}

// istioCircuitBreakers are Istio's default thresholds, all at the maximum.
func istioCircuitBreakers() *clusterv3.CircuitBreakers {
	most := wrapperspb.UInt32(math.MaxUint32)
	return &clusterv3.CircuitBreakers{Thresholds: []*clusterv3.CircuitBreakers_Thresholds{{
		MaxConnections: most, MaxPendingRequests: most, MaxRequests: most, MaxRetries: most,
	}}}
}

// cluster is a static cluster of one endpoint.
func cluster(name string, addr netip.AddrPort) *clusterv3.Cluster {
	return &clusterv3.Cluster{
		Name:                 name,
		ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_STATIC},
		ConnectTimeout:       durationpb.New(10 * time.Second), // Istio's connectTimeout
		LoadAssignment: &endpointv3.ClusterLoadAssignment{
			ClusterName: name,
			Endpoints: []*endpointv3.LocalityLbEndpoints{{
				LbEndpoints: []*endpointv3.LbEndpoint{{
					HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{Address: address(addr)}},
				}},
			}},
		},
	}
}

// http1Options configures HTTP/1.1 to the upstream, kept alive (Envoy's
// connection pool keeps connections open between requests by default).
func http1Options() (map[string]*anypb.Any, error) {
	opts, err := anypb.New(&httpv3.HttpProtocolOptions{
		CommonHttpProtocolOptions: &corev3.HttpProtocolOptions{IdleTimeout: durationpb.New(time.Hour)},
		UpstreamProtocolOptions: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_{ExplicitHttpConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig{
			ProtocolConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_HttpProtocolOptions{HttpProtocolOptions: &corev3.Http1ProtocolOptions{}},
		}},
	})
	if err != nil {
		return nil, err
	}
	return map[string]*anypb.Any{"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": opts}, nil
}

// commonTLS is the workload's certificate and the mesh's root.
func (c Config) commonTLS(peer []*tlsv3.SubjectAltNameMatcher) *tlsv3.CommonTlsContext {
	m := c.Sidecar.MTLS
	return &tlsv3.CommonTlsContext{
		TlsParams:     &tlsv3.TlsParameters{TlsMinimumProtocolVersion: tlsv3.TlsParameters_TLSv1_2},
		AlpnProtocols: []string{"http/1.1"},
		TlsCertificates: []*tlsv3.TlsCertificate{{
			CertificateChain: &corev3.DataSource{Specifier: &corev3.DataSource_Filename{Filename: m.Cert}},
			PrivateKey:       &corev3.DataSource{Specifier: &corev3.DataSource_Filename{Filename: m.Key}},
		}},
		ValidationContextType: &tlsv3.CommonTlsContext_ValidationContext{ValidationContext: &tlsv3.CertificateValidationContext{
			TrustedCa:                 &corev3.DataSource{Specifier: &corev3.DataSource_Filename{Filename: m.CA}},
			MatchTypedSubjectAltNames: peer,
		}},
	}
}

// downstreamTLS requires the peer's certificate: any workload of the trust
// domain (Istio's inbound checks the trust domain, authorization policy
// the rest).
func (c Config) downstreamTLS() (*corev3.TransportSocket, error) {
	trustDomain := []*tlsv3.SubjectAltNameMatcher{{
		SanType: tlsv3.SubjectAltNameMatcher_URI,
		Matcher: &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Prefix{Prefix: "spiffe://cluster.local/"}},
	}}
	return transportSocket(&tlsv3.DownstreamTlsContext{
		CommonTlsContext:         c.commonTLS(trustDomain),
		RequireClientCertificate: wrapperspb.Bool(true),
	})
}

// upstreamTLS presents the workload's certificate and requires the
// server's SPIFFE ID, as Istio's outbound cluster does.
func (c Config) upstreamTLS() (*corev3.TransportSocket, error) {
	m := c.Sidecar.MTLS
	peer := []*tlsv3.SubjectAltNameMatcher{{
		SanType: tlsv3.SubjectAltNameMatcher_URI,
		Matcher: &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: m.PeerID}},
	}}
	return transportSocket(&tlsv3.UpstreamTlsContext{CommonTlsContext: c.commonTLS(peer), Sni: m.PeerName})
}

func transportSocket(m proto.Message) (*corev3.TransportSocket, error) {
	a, err := anypb.New(m)
	if err != nil {
		return nil, err
	}
	return &corev3.TransportSocket{Name: "envoy.transport_sockets.tls", ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: a}}, nil
}

func typedListenerFilter(name string, m proto.Message) (*listenerv3.ListenerFilter, error) {
	a, err := anypb.New(m)
	if err != nil {
		return nil, err
	}
	return &listenerv3.ListenerFilter{Name: name, ConfigType: &listenerv3.ListenerFilter_TypedConfig{TypedConfig: a}}, nil
}

func address(a netip.AddrPort) *corev3.Address {
	return &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: socketAddress(a)}}
}

func socketAddress(a netip.AddrPort) *corev3.SocketAddress {
	return &corev3.SocketAddress{
		Address:       a.Addr().String(),
		PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: uint32(a.Port())},
	}
}
