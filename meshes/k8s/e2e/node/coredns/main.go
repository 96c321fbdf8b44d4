// Command coredns is CoreDNS (its coremain, from its own module at the
// version go.mod names) with the plugins the node's Corefile uses and no
// others, as CoreDNS documents for a build of one's own: the full set
// (cloud DNS providers, etcd, dnstap…) would double the build.
package main

import (
	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/ready"

	"github.com/coredns/coredns/coremain"
)

func main() { coremain.Run() }
