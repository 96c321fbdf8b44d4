# loadgen — make targets. Go 1.26 at /usr/local/go/bin.
export PATH := /usr/local/go/bin:$(PATH)
GO      ?= go
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo devel)
LDFLAGS := -X loadgen/loadgen.version=$(VERSION)

.PHONY: build deps docs lint test test-k8s test-cluster cluster-up cluster-down flannel-study cni-study node-build cross tidy race race-light fuzz bench demo clean

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o bin/loadgen ./cmd/loadgen

# The packages the tests need (scripts/deps names each and why): as root
# with apt-get it installs what is missing; otherwise it stops, naming them.
# `scripts/deps --check` says what is missing and installs nothing.
deps:
	@scripts/deps

# The CLI reference, generated from the commands by cobra's generator:
# docs/cli/loadgen_*.md and the man pages docs/man/loadgen*.1 (man -l
# docs/man/loadgen-run.1). TestCLIReference fails when they are stale.
docs:
	$(GO) test -count=1 -run '^TestCLIReference$$' ./cmd/loadgen -update-docs

# The tests, as CI runs them, after `make deps`.
# Each stage says when it starts (UTC), so a slow CI run shows where its
# time went. The durations it prints are CI's, measured on 2026-12-05 on a
# 2-vCPU VM: a fresh machine's run of 68dd158 (vet 19 min, unit tests 9,
# test-k8s 15, the node's build 11, the node tests 27) and warm runs of
# f717d88 and 94118e5 (37-40 min with .ci/run's race stage, ~6 min of it).
test:
	@echo "make test: about 135 min on a fresh machine (cold Go caches, the test node and Cilium built first), 57 min warm"
	@scripts/deps
	@echo "== $$(date -u +%T) vet"
	$(GO) vet ./...
	$(MAKE) cross
	@echo "== $$(date -u +%T) lint"
	$(MAKE) lint
	@echo "== $$(date -u +%T) unit tests"
	$(GO) test -count=1 ./...
	@echo "== $$(date -u +%T) test-k8s"
	$(MAKE) test-k8s
	@echo "== $$(date -u +%T) test-cluster"
	$(MAKE) test-cluster
	@echo "== $$(date -u +%T) done"

# gofmt and staticcheck, clean on the tree (both modules). staticcheck
# comes from the Go module proxy at the version named here (a minute warm);
# a finding that is right to keep says so where it stands
# (//lint:ignore CHECK why, or //lint:file-ignore).
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
		if [ -n "$$out" ]; then echo "gofmt: these files are not formatted (gofmt -w them):"; echo "$$out"; exit 1; fi
	$(GO) run $(STATICCHECK) ./...
	cd $(E2E) && $(GO) run $(STATICCHECK) ./...

# loadgen runs off Linux too (goroutines drive the load; event loops,
# network namespaces and the lab are Linux's): it and its tests must build.
# FreeBSD takes the same non-Linux files as macOS: it vets the packages
# that build without the Kubernetes, Istio and Envoy API stack (LIGHT),
# which a cold build for a third GOOS would take minutes for.
cross:
	GOOS=darwin $(GO) vet ./...
	GOOS=freebsd $(GO) vet $(LIGHT)

# The packages whose code and tests build without client-go, istio.io and
# go-control-plane: the engine, protocols, targets, reports and the lab.
LIGHT = $(shell $(GO) list -test -f '{{.ImportPath}}|{{join .Deps " "}}' ./... | awk -F'|' '{p=$$1; sub(/ .*/,"",p); sub(/\.test$$/,"",p); sub(/_test$$/,"",p); seen[p]=1; if ($$2 ~ /(^| )(k8s\.io\/client-go|github\.com\/envoyproxy\/go-control-plane|istio\.io)\//) heavy[p]=1} END {for (p in seen) if (!heavy[p]) print p}' | sort)

# The Kubernetes end-to-end tests against k8s.io/kubernetes' test API
# server, Job controller and garbage collector in-process: a nested
# module; a cold build takes minutes, a warm one seconds.
E2E := meshes/k8s/e2e
test-k8s:
	cd $(E2E) && $(GO) vet ./... && $(GO) test -count=1 -timeout 15m -skip '^TestNode' ./...

# The tests on a real node (root; Debian's containerd, runc, CNI plugins,
# iptables, nftables, conntrack, prometheus and clang-16): the node's
# components and Cilium are built once into ~/.cache/loadgen-node (a cold
# build takes 8 to 20 minutes for the node, 13 to 36 for Cilium, then
# seconds), the node starts, the tests run on it, and its teardown leaves
# nothing on the machine. LOADGEN_NODE_DIR=/var/tmp/loadgen-node runs them
# on the node `make cluster-up` started instead. TestNodeFlannel,
# TestNodeMacvlan and TestNodeCilium start two nodes of their own (network
# namespaces on an underlay), one after the other, and take them down
# again. flanneld and Traefik are built from their modules into the same
# cache by the test binary, at nice 19 while the first node tests run.
# The tests that measure the node against itself run first, alone; then
# TestNodeTraefik beside the ones whose checks hold on a busy node and the
# two-node tests (-parallel 8: all at once; meshes/k8s/e2e/node_test.go's
# beside).
test-cluster: node-build
	cd $(E2E) && $(GO) test -count=1 -timeout 55m -parallel 8 -run '^TestNode' ./...

node-build:
	cd $(E2E) && $(GO) run ./cmd/node build && $(GO) run ./cmd/node --nodes 2 --cni cilium build

# A node to try things on by hand: KUBECONFIG=/var/tmp/loadgen-node/admin.kubeconfig.
# NODEFLAGS=--traefik adds the Gateway API's CRDs and Traefik
# (GatewayClass and IngressClass traefik); NODEFLAGS="--nodes 2 --backend vxlan"
# starts two nodes with Flannel instead (backend: vxlan, host-gw or udp;
# `go run ./cmd/node backend host-gw` in meshes/k8s/e2e switches it), and
# NODEFLAGS="--nodes 2 --cni macvlan" two nodes with Macvlan.
cluster-up:
	cd $(E2E) && $(GO) run ./cmd/node $(NODEFLAGS) up

cluster-down:
	cd $(E2E) && $(GO) run ./cmd/node down

# loadgen study flannel-backends on two nodes of this machine (root): the
# lab's first, then the nodes with each Flannel backend in turn, into
# STUDYDIR; STUDYFLAGS="-d 3s --repeats 1" for a quick look,
# STUDYFLAGS="--k8s-paths DIR" adds loadgen study k8s-paths on vxlan.
STUDYDIR ?= results-flannel-cluster
flannel-study:
	cd $(E2E) && $(GO) run ./cmd/node --nodes 2 --dir /var/tmp/loadgen-node-study study --lab -o $(abspath $(STUDYDIR)) $(STUDYFLAGS)

# loadgen study cni-matrix on two nodes of this machine (root), one CNI
# after another (Macvlan, Flannel vxlan and host-gw, Cilium with VXLAN,
# then Cilium's kube-proxy replacement), into CNISTUDYDIR: about 35 min
# with the flags below; the machine to itself (docs/test-cluster.md).
CNISTUDYDIR ?= results-cni-cluster
CNISTUDYFLAGS ?= -d 3s --repeats 3
cni-study:
	cd $(E2E) && $(GO) run ./cmd/node --dir /var/tmp/loadgen-node-study cni-study -o $(abspath $(CNISTUDYDIR)) $(CNISTUDYFLAGS)

# Both modules: the nested one requires the main one, so a dependency of
# the main module changes its go.sum too (test-k8s fails until tidied).
tidy:
	$(GO) mod tidy
	cd meshes/k8s/e2e && $(GO) mod tidy

race:
	$(GO) test -race -count=1 ./...

# What CI runs under the race detector: the light packages (LIGHT), where
# the engine's, the protocols' and the targets' concurrency is, -short. The
# Kubernetes clients' packages run without it in make test; their cold
# build under -race took minutes of a CI run on a fresh machine.
race-light:
	$(GO) test -race -count=1 -short $(LIGHT)

# A short pass of every fuzz target (parsers and decoders), FUZZTIME each.
FUZZTIME ?= 10s
fuzz:
	@grep -rl --include='*_test.go' '^func Fuzz' . | sort | while read -r f; do \
		for fn in $$(grep -o '^func Fuzz[A-Za-z0-9_]*' $$f | cut -d' ' -f2); do \
			echo "== $$(dirname $$f) $$fn"; \
			$(GO) test -run XXX -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) ./$$(dirname $$f)/ || exit 1; \
		done; \
	done

# loadgen vs wrk on the same nginx target; prints the ratios (see bench/bench.sh).
bench:
	bash bench/bench.sh

# The built-in sweep: httpbin direct vs through a real nginx (installed
# here if missing), about a minute; results in ./sweep-demo.
demo: build
	@command -v nginx >/dev/null || (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q nginx) || \
		echo "nginx could not be installed: the demo sweeps the baseline path only"
	bin/loadgen sweep -o sweep-demo-$$(date +%Y%m%d-%H%M%S)

clean:
	rm -rf bin
