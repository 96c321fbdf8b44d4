# loadgen — make targets. Go 1.26 at /usr/local/go/bin.
export PATH := /usr/local/go/bin:$(PATH)
GO      ?= go
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo devel)
LDFLAGS := -X loadgen/loadgen.version=$(VERSION)

.PHONY: build test race fuzz bench demo clean

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o bin/loadgen ./cmd/loadgen

# The tests, as CI runs them.
test:
	$(GO) vet ./...
	$(GO) test -count=1 ./...

race:
	$(GO) test -race -count=1 ./...

# A short pass of every fuzz target (parsers and decoders).
fuzz:
	$(GO) test -run XXX -fuzz FuzzParse -fuzztime 20s ./loadgen/pace/
	$(GO) test -run XXX -fuzz FuzzDecode -fuzztime 20s ./results/hist/

# loadgen vs wrk on the same nginx target; prints the ratios (see bench/bench.sh).
bench:
	bash bench/bench.sh

# A quick run against the built-in target: start httpbin, load it, stop it.
demo: build
	@bin/loadgen serve httpbin --addr 127.0.0.1:18080 --for 30s > /tmp/loadgen-demo-httpbin.log 2>&1 & pid=$$!; \
	sleep 0.5; \
	bin/loadgen run -c 16 -t 2 -d 5s --latency http://127.0.0.1:18080/bytes/1024; rc=$$?; \
	bin/loadgen run -c 16 -t 2 -d 5s -R 5000 --latency http://127.0.0.1:18080/get || rc=$$?; \
	kill $$pid 2>/dev/null; wait $$pid; cat /tmp/loadgen-demo-httpbin.log; exit $$rc

clean:
	rm -rf bin
