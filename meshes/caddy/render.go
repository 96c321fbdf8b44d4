package caddy

import (
	"encoding/json"
)

// The subset of Caddy's JSON config (caddyserver.com/docs/json) the
// sidecar uses. Caddy decodes strictly: a misspelt field fails `caddy
// validate`.
type (
	document struct {
		Admin   admin   `json:"admin"`
		Logging logging `json:"logging"`
		Storage storage `json:"storage"`
		Apps    apps    `json:"apps"`
	}
	admin struct {
		Listen string      `json:"listen"`
		Config adminConfig `json:"config"`
	}
	adminConfig struct {
		Persist bool `json:"persist"`
	}
	logging struct {
		Logs map[string]logConfig `json:"logs"`
	}
	logConfig struct {
		Level   string   `json:"level"`
		Writer  writer   `json:"writer"`
		Include []string `json:"include,omitempty"`
		Exclude []string `json:"exclude,omitempty"`
	}
	writer struct {
		Output   string `json:"output"`
		Filename string `json:"filename,omitempty"`
	}
	storage struct {
		Module string `json:"module"`
		Root   string `json:"root"`
	}
	apps struct {
		HTTP httpApp `json:"http"`
		TLS  *tlsApp `json:"tls,omitempty"`
	}
	httpApp struct {
		Servers map[string]server `json:"servers"`
	}
	server struct {
		Listen         []string       `json:"listen"`
		AutomaticHTTPS automaticHTTPS `json:"automatic_https"`
		TLSPolicies    []tlsPolicy    `json:"tls_connection_policies,omitempty"`
		Routes         []route        `json:"routes"`
		Protocols      []string       `json:"protocols"`
		// StrictSNIHost false: the outbound side's SNI is the peer's
		// name, its Host header the pod's address (Caddy defaults to 421
		// on a mismatch once client certificates are required).
		StrictSNIHost *bool      `json:"strict_sni_host,omitempty"`
		Logs          *serverLog `json:"logs,omitempty"`
		// Metrics {} turns on the server's HTTP metrics (Config.Metrics).
		Metrics *struct{} `json:"metrics,omitempty"`
	}
	serverLog struct {
		DefaultLoggerName string `json:"default_logger_name"`
	}
	automaticHTTPS struct {
		Disable bool `json:"disable"`
	}
	tlsPolicy struct {
		CertificateSelection certSelection `json:"certificate_selection"`
		ClientAuthentication *clientAuth   `json:"client_authentication,omitempty"`
		ALPN                 []string      `json:"alpn"`
	}
	certSelection struct {
		AnyTag []string `json:"any_tag"`
	}
	clientAuth struct {
		TrustedCACertPEMFiles []string `json:"trusted_ca_certs_pem_files"`
		Mode                  string   `json:"mode"`
	}
	route struct {
		Handle []reverseProxy `json:"handle"`
	}
	reverseProxy struct {
		Handler   string     `json:"handler"`
		Upstreams []upstream `json:"upstreams"`
		Transport transport  `json:"transport"`
		Headers   *headers   `json:"headers,omitempty"`
		// FlushInterval -1 streams responses as they come (no buffering).
		FlushInterval int `json:"flush_interval"`
	}
	upstream struct {
		Dial string `json:"dial"`
	}
	transport struct {
		Protocol  string        `json:"protocol"`
		KeepAlive keepAlive     `json:"keep_alive"`
		Versions  []string      `json:"versions"`
		TLS       *transportTLS `json:"tls,omitempty"`
	}
	keepAlive struct {
		Enabled             bool  `json:"enabled"`
		MaxIdleConnsPerHost int   `json:"max_idle_conns_per_host"`
		IdleConnTimeout     int64 `json:"idle_timeout"` // nanoseconds
	}
	transportTLS struct {
		RootCAPEMFiles           []string `json:"root_ca_pem_files"`
		ClientCertificateFile    string   `json:"client_certificate_file"`
		ClientCertificateKeyFile string   `json:"client_certificate_key_file"`
		ServerName               string   `json:"server_name"`
	}
	headers struct {
		Request headerOps `json:"request"`
	}
	headerOps struct {
		Set map[string][]string `json:"set"`
	}
	tlsApp struct {
		Certificates certificates `json:"certificates"`
	}
	certificates struct {
		LoadFiles []loadFile `json:"load_files"`
	}
	loadFile struct {
		Certificate string   `json:"certificate"`
		Key         string   `json:"key"`
		Tags        []string `json:"tags"`
	}
)

// Files of the run directory.
const (
	confFile   = "caddy.json"
	logFile    = "caddy.log"  // stderr: caddy's own log (warnings and errors)
	accessLog  = "access.log" // one JSON line per request, with AccessLog
	storageDir = "storage"    // caddy's data (it issues nothing here)
	certTag    = "workload"
)

// upstreamKeepalive is the idle connections kept per upstream, as nginx's
// profile keeps.
const upstreamKeepalive = 64

// Render returns caddy.json for c, or the error of c.Validate. The
// storage path is under c.Dir ("." when empty: Start always sets it).
func (c Config) Render() ([]byte, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	s := c.Sidecar
	dir := c.Dir
	if dir == "" {
		dir = "."
	}
	var access []string // the access loggers, kept out of caddy.log
	if c.AccessLog {
		access = []string{"http.log.access"}
	}
	doc := document{
		Admin:   admin{Listen: s.Admin.String()},
		Logging: logging{Logs: map[string]logConfig{"default": {Level: "WARN", Writer: writer{Output: "stderr"}, Exclude: access}}},
		Storage: storage{Module: "file_system", Root: dir + "/" + storageDir},
		Apps: apps{HTTP: httpApp{Servers: map[string]server{
			"inbound":  c.server(s.Inbound.String(), s.App.String(), true),
			"outbound": c.server(s.Outbound.String(), s.UpstreamAddr(), false),
		}}},
	}
	if c.AccessLog {
		doc.Logging.Logs["access"] = logConfig{Level: "INFO", Writer: writer{Output: "file", Filename: dir + "/" + accessLog}, Include: access}
	}
	if m := s.MTLS; m != nil {
		doc.Apps.TLS = &tlsApp{Certificates: certificates{LoadFiles: []loadFile{{Certificate: m.Cert, Key: m.Key, Tags: []string{certTag}}}}}
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// server is one listener proxying to dial. With mTLS the inbound one
// requires a client certificate of the mesh's CA and tells the app its
// SHA-256 (X-Forwarded-Client-Cert, as Envoy writes Hash=), and the
// outbound one presents the workload's certificate and verifies the
// server's chain and name.
func (c Config) server(listen, dial string, inbound bool) server {
	m := c.Sidecar.MTLS
	rp := reverseProxy{
		Handler:       "reverse_proxy",
		Upstreams:     []upstream{{Dial: dial}},
		FlushInterval: -1,
		Transport: transport{
			Protocol:  "http",
			Versions:  []string{"1.1"},
			KeepAlive: keepAlive{Enabled: true, MaxIdleConnsPerHost: upstreamKeepalive, IdleConnTimeout: 75e9},
		},
	}
	srv := server{
		Listen:         []string{listen},
		AutomaticHTTPS: automaticHTTPS{Disable: true},
		Protocols:      []string{"h1"},
	}
	if c.AccessLog {
		srv.Logs = &serverLog{DefaultLoggerName: "sidecar"}
	}
	if c.Metrics {
		srv.Metrics = &struct{}{}
	}
	switch {
	case m != nil && inbound:
		strict := false
		srv.StrictSNIHost = &strict
		srv.TLSPolicies = []tlsPolicy{{
			CertificateSelection: certSelection{AnyTag: []string{certTag}},
			ClientAuthentication: &clientAuth{TrustedCACertPEMFiles: []string{m.CA}, Mode: "require_and_verify"},
			ALPN:                 []string{"http/1.1"},
		}}
		rp.Headers = &headers{Request: headerOps{Set: map[string][]string{
			"X-Forwarded-Client-Cert": {"Hash={http.request.tls.client.fingerprint}"},
		}}}
	case m != nil:
		rp.Transport.TLS = &transportTLS{RootCAPEMFiles: []string{m.CA}, ClientCertificateFile: m.Cert,
			ClientCertificateKeyFile: m.Key, ServerName: m.PeerName}
	}
	srv.Routes = []route{{Handle: []reverseProxy{rp}}}
	return srv
}
