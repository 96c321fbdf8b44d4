package e2e

import (
	"context"
	"os"
	"sync"
	"time"

	"loadgen/meshes/k8s/e2e/node"
)

// The builds only some node tests need, beyond the node's own (Traefik's),
// start with the test binary at the lowest CPU priority and go on while the
// first tests run: a cold one takes minutes of CPU that those tests' waits
// (pods starting, steps of fixed length) leave idle. A test that needs one
// waits for it.
var background struct {
	once    sync.Once
	done    chan struct{}
	traefik string
	err     error
}

func startBackgroundBuilds() {
	background.once.Do(func() {
		background.done = make(chan struct{})
		go func() {
			defer close(background.done)
			ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
			defer cancel()
			background.traefik, background.err = node.BuildTraefik(ctx, node.BuildOptions{Module: ".", Log: os.Stderr, Nice: true})
		}()
	})
}

// traefikBin is Traefik's binary, built in the background (started now if
// the test binary did not start it).
func traefikBin() (string, error) {
	startBackgroundBuilds()
	<-background.done
	return background.traefik, background.err
}
