package run

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/cluster"
	"loadgen/results/store"
)

// ControllerFile records, in a results directory, what a run changed in a
// shared controller object and whether it was put back
// (cluster.ControllerChange).
const ControllerFile = "controller.json"

// configureController sets the controller's ConfigMap keys by server-side
// apply (loadgen's field manager owns just those keys), after recording
// their previous values in the results directory and on the object.
func (k *Coordinator) configureController(ctx context.Context) (*cluster.ControllerChange, error) {
	o := k.Options
	ch, err := k.Cluster.ConfigureController(ctx, o.ControllerConfig(), o.Namespace, o.RunID, k.writeController)
	if err != nil {
		return nil, err
	}
	k.say("configured %s: %s (put back at the end)", ch.Object, keyValues(ch.Set))
	k.say("%s", ReloadNotice(ch.Object))
	return ch, nil
}

func (k *Coordinator) writeController(ch *cluster.ControllerChange) error {
	if err := store.WriteJSON(filepath.Join(k.Dir, ControllerFile), ch); err != nil {
		return fmt.Errorf("results directory: %w", err)
	}
	return nil
}

func keyValues(m map[string]string) string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// ReloadNotice says what a change of the controller's ConfigMap costs
// others. ingress-nginx's custom-configuration example: "If the Configmap
// is updated, NGINX will be reloaded with the new configuration".
func ReloadNotice(object string) string {
	return fmt.Sprintf("note: each change of %s reloads nginx in every pod of its controller, for every Ingress it serves, "+
		"other tenants' too: once now, once when it is put back", object)
}

// ControllerRenderNotes are what k8s render says with
// --configure-controller, which renders the controller's own ConfigMap:
// that it is shared and whose to put back, and what applying it costs
// others (ReloadNotice). None without it.
func ControllerRenderNotes(o k8s.Options) []string {
	if !o.ConfigureController {
		return nil
	}
	cm := o.ControllerConfig()
	ref := cm.Namespace + "/" + cm.Name
	return []string{
		"note: the ConfigMap " + ref + " is the controller's, shared by every Ingress; " +
			"apply it with `kubectl apply --server-side --field-manager=loadgen` and put its keys back yourself (" +
			"`loadgen k8s run --configure-controller` does both, and gives the keys back to their owners)",
		ReloadNotice("ConfigMap " + ref),
	}
}
