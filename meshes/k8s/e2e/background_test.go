package e2e

import (
	"context"
	"os"
	"sync"
	"time"

	"loadgen/meshes/k8s/e2e/node"
)

// The builds only some node tests need, beyond the node's own (flanneld's
// and Traefik's), start with the test binary at the lowest CPU priority and
// go on while the first tests run: a cold one takes minutes of CPU that
// those tests' waits (pods starting, steps of fixed length) leave idle. A
// test that needs one waits for it. flanneld first: TestNodeFlannel runs
// before TestNodeTraefik.
var background struct {
	once                     sync.Once
	flannelDone, traefikDone chan struct{}
	flanneld, traefik        string
	flannelErr, traefikErr   error
}

func startBackgroundBuilds() {
	background.once.Do(func() {
		background.flannelDone, background.traefikDone = make(chan struct{}), make(chan struct{})
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
			defer cancel()
			o := node.BuildOptions{Module: ".", Log: os.Stderr, Nice: true}
			background.flanneld, background.flannelErr = node.BuildFlannel(ctx, o)
			close(background.flannelDone)
			background.traefik, background.traefikErr = node.BuildTraefik(ctx, o)
			close(background.traefikDone)
		}()
	})
}

// flanneldBin is flanneld's binary, built in the background (started now
// if the test binary did not start it).
func flanneldBin() (string, error) {
	startBackgroundBuilds()
	<-background.flannelDone
	return background.flanneld, background.flannelErr
}

// traefikBin is Traefik's binary, built in the background (started now if
// the test binary did not start it).
func traefikBin() (string, error) {
	startBackgroundBuilds()
	<-background.traefikDone
	return background.traefik, background.traefikErr
}
