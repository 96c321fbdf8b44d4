package run

import (
	"context"
	"strconv"
	"strings"

	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/cluster"
)

// nativeSidecars tells --mesh sidecar's rendering whether the cluster
// runs native sidecars (an init container with restartPolicy Always,
// Kubernetes 1.29 and later): without them the proxy is an ordinary
// container of the target, and a mode that puts one in the workers' pods
// is refused.
func (k *Coordinator) nativeSidecars(ctx context.Context) error {
	if k.Options.Mesh != k8s.MeshSidecar || k.Options.Mode == k8s.ModeNone {
		return nil
	}
	v, err := k.Cluster.Client.Discovery().ServerVersion()
	if err != nil {
		return k.Cluster.Errorf("server version: %v", cluster.OneLine(err))
	}
	if native, ok := nativeSidecarVersion(v.Major, v.Minor); ok && !native {
		k.Options.Sidecar.NoNative = true
		k.say("Kubernetes %s.%s has no native sidecars (1.29 and later): the target's proxy is an ordinary container", v.Major, v.Minor)
		if _, err := k.Options.WithDefaults(); err != nil {
			return err
		}
	}
	return nil
}

// nativeSidecarVersion tells whether Kubernetes major.minor runs native
// sidecars by default (beta, on, since 1.29); minors such as "29+" (EKS,
// GKE) count as 29. ok is false when the version cannot be read.
func nativeSidecarVersion(major, minor string) (native, ok bool) {
	ma, err1 := strconv.Atoi(major)
	mi, err2 := strconv.Atoi(strings.TrimRight(minor, "+"))
	if err1 != nil || err2 != nil {
		return false, false
	}
	return ma > 1 || ma == 1 && mi >= 29, true
}
