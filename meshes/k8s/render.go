package k8s

import (
	"bytes"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// Rendering is what Render made: the objects in apply order, and notes for
// the person applying them (App Mesh's discontinuation).
type Rendering struct {
	Objects []*unstructured.Unstructured
	Notes   []string
}

// Render returns the objects of a mesh comparison: the namespace, the
// target and its Service, the mesh's or gateway's objects and a client Job
// (client, when nil, is a 2-worker closed-loop run against the mesh's HTTP
// address).
func Render(o Options, client *JobSpec) (*Rendering, error) {
	o, err := o.WithDefaults()
	if err != nil {
		return nil, err
	}
	objs, err := o.objects()
	if err != nil {
		return nil, err
	}
	r := &Rendering{}
	if client == nil {
		args := []string{"-d", "30s"}
		if o.UsesIngress() {
			args = append(args, "-H", "Host: "+IngressHost) // the Ingress rule's host
		}
		switch u, err := o.URL(PortHTTP); {
		case err != nil:
			r.Notes = append(r.Notes, fmt.Sprintf("note: no client Job: %v; run the sweep with `loadgen k8s run`, or aim `loadgen run` at that address", err))
		default:
			client = &JobSpec{Name: ClientName, Workers: 2, Connections: 8, Threads: 2, RunArgs: append(args, u+"/get")}
		}
	}
	if client != nil {
		objs = append(objs, o.Job(*client))
	}
	switch o.Mesh {
	case MeshAppMesh:
		r.Notes = append(r.Notes, AppMeshNotice)
	case MeshIngressNginx:
		r.Notes = append(r.Notes, IngressNginxNotice)
	}
	s, err := NewScheme()
	if err != nil {
		return nil, err
	}
	for _, obj := range objs {
		u, err := toUnstructured(s, obj)
		if err != nil {
			return nil, err
		}
		r.Objects = append(r.Objects, u)
	}
	return r, nil
}

// objects are the rendering without its client Job.
func (o Options) objects() ([]runtime.Object, error) {
	ns := o.namespace()
	ns.Annotations = map[string]string{}
	o.decorateNamespace(ns.Labels, ns.Annotations)
	if len(ns.Annotations) == 0 {
		ns.Annotations = nil
	}
	out := []runtime.Object{ns}
	var extra []runtime.Object
	switch o.Mesh {
	case MeshIstio, MeshIstioAmbient, MeshIstioWaypoint:
		extra = o.istioObjects()
	case MeshAppMesh:
		extra = o.appMeshObjects()
	case MeshIngressNginx, MeshIngress:
		var err error
		if extra, err = o.ingressObjects(); err != nil {
			return nil, err
		}
	case MeshGateway:
		extra = o.gatewayObjects()
	case MeshSidecar:
		var err error
		if extra, err = o.sidecarMeshObjects(); err != nil {
			return nil, err
		}
	}
	out = append(out, o.target(), o.service())
	for i := 2; i <= o.Hops; i++ {
		out = append(out, o.hopTarget(i), o.targetService(HopName(i)))
	}
	if o.DirectTarget() {
		out = append(out, o.targetDirect(), o.targetService(TargetDirectName))
	}
	return append(out, extra...), nil
}

// WithoutClient is the rendering less its client Job: what a run applies
// before it makes a Job per step.
func (r *Rendering) WithoutClient() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, u := range r.Objects {
		if u.GetKind() == "Job" && u.GetName() == ClientName {
			continue
		}
		out = append(out, u)
	}
	return out
}

// ToUnstructured converts typed objects of the scheme (NewScheme) for
// Apply (package cluster) and WriteYAML, as Render does.
func ToUnstructured(objs ...runtime.Object) ([]*unstructured.Unstructured, error) {
	s, err := NewScheme()
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, obj := range objs {
		u, err := toUnstructured(s, obj)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

// toUnstructured sets the object's kind from the scheme and drops the
// status and empty creation time that typed values marshal.
func toUnstructured(s *runtime.Scheme, obj runtime.Object) (*unstructured.Unstructured, error) {
	gvks, _, err := s.ObjectKinds(obj)
	if err != nil || len(gvks) == 0 {
		return nil, fmt.Errorf("render: %T is not in the scheme: %v", obj, err)
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("render %s: %w", gvks[0].Kind, err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvks[0])
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	delete(u.Object, "status") // the cluster's to write, never applied
	if spec, ok := u.Object["spec"].(map[string]any); ok {
		if tpl, ok := spec["template"].(map[string]any); ok {
			unstructured.RemoveNestedField(tpl, "metadata", "creationTimestamp")
		}
	}
	return u, nil
}

// WriteYAML writes the objects as one multi-document YAML stream that
// `kubectl apply -f` accepts. The notes are the caller's to show, once.
func (r *Rendering) WriteYAML(w io.Writer) error {
	var buf bytes.Buffer
	for i, u := range r.Objects {
		b, err := yaml.Marshal(u.Object)
		if err != nil {
			return fmt.Errorf("render %s/%s: %w", u.GetKind(), u.GetName(), err)
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(b)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// ObjectRef names an object in messages: Kind namespace/name.
func ObjectRef(u *unstructured.Unstructured) string {
	if u.GetNamespace() == "" {
		return u.GetKind() + " " + u.GetName()
	}
	return u.GetKind() + " " + u.GetNamespace() + "/" + u.GetName()
}
