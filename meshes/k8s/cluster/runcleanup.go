package cluster

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// RunCleanup says what a run's cleanup undoes: at the end of `k8s run`,
// and by `k8s cleanup` after a run that was killed.
type RunCleanup struct {
	Namespace string
	RunID     string // "": every run's of the namespace
	// Kinds are the kinds whose objects are deleted (RunKinds: those a
	// run applied); none: every kind loadgen makes.
	Kinds []schema.GroupVersionKind
	// Restore puts back, first, the controller ConfigMaps the run changed
	// (--configure-controller), looking in IngressNamespaces (none: every
	// namespace, as RestoreControllers does).
	Restore           bool
	IngressNamespaces []string
}

// Cleaned is what a run's cleanup did, and what failed of it.
type Cleaned struct {
	Restored, Deleted     []string
	RestoreErr, DeleteErr error
}

// Err is the cleanup's errors, the restore's first.
func (c Cleaned) Err() error { return errors.Join(c.RestoreErr, c.DeleteErr) }

// CleanupRun is the one cleanup of a run: it restores the controller
// ConfigMaps the run changed, then deletes the run's objects, even when
// the restore failed, and reports both errors. Deleting loses nothing a
// later restore needs: the previous values are on the controller's
// ConfigMap itself (AnnPrevious, found by LabelConfiguredFor), in the
// controller's namespace, which is not the run's (a run makes its own)
// and carries no label of loadgen's objects, so Cleanup never deletes
// it. `loadgen k8s cleanup` puts it back later, and meanwhile nothing of
// the run is left running.
func (c *Cluster) CleanupRun(ctx context.Context, r RunCleanup) Cleaned {
	var out Cleaned
	if r.Restore {
		out.Restored, out.RestoreErr = c.RestoreControllers(ctx, r.Namespace, r.RunID, r.IngressNamespaces...)
	}
	out.Deleted, out.DeleteErr = c.Cleanup(ctx, r.Namespace, r.RunID, r.Kinds...)
	return out
}
