# loadgen — make targets. Go 1.26 at /usr/local/go/bin.
export PATH := /usr/local/go/bin:$(PATH)
GO      ?= go
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo devel)
LDFLAGS := -X loadgen/loadgen.version=$(VERSION)

.PHONY: build test test-k8s cross tidy race fuzz bench demo clean

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o bin/loadgen ./cmd/loadgen

# The tests, as CI runs them.
test:
	$(GO) vet ./...
	$(MAKE) cross
	$(GO) test -count=1 ./...
	$(MAKE) test-k8s

# loadgen runs off Linux too (goroutines drive the load; event loops,
# network namespaces and the lab are Linux's): it and its tests must build.
cross:
	GOOS=darwin $(GO) vet ./...
	GOOS=freebsd $(GO) vet ./...

# The Kubernetes end-to-end tests: a nested module (k8s.io/kubernetes' test
# API server, Job controller and garbage collector in-process); a cold
# build takes minutes, a warm one seconds.
test-k8s:
	cd meshes/k8s/e2e && $(GO) vet ./... && $(GO) test -count=1 -timeout 15m ./...

# Both modules: the nested one requires the main one, so a dependency of
# the main module changes its go.sum too (test-k8s fails until tidied).
tidy:
	$(GO) mod tidy
	cd meshes/k8s/e2e && $(GO) mod tidy

race:
	$(GO) test -race -count=1 ./...

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
