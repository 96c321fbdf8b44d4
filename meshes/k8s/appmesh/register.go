package appmesh

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the App Mesh controller's API group and version.
var GroupVersion = schema.GroupVersion{Group: "appmesh.k8s.aws", Version: "v1beta2"}

// AddToScheme registers the App Mesh kinds with s.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion,
		&Mesh{}, &MeshList{},
		&VirtualNode{}, &VirtualNodeList{},
		&VirtualRouter{}, &VirtualRouterList{},
		&VirtualService{}, &VirtualServiceList{},
	)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// deepCopy copies a plain-data object through JSON. These types hold only
// JSON-shaped data (no funcs, channels or cycles), so the round trip is a
// faithful deep copy; it stands in for deepcopy-gen's output, which would
// need the code generator in the build.
func deepCopy[T any](in *T) *T {
	if in == nil {
		return nil
	}
	b, err := json.Marshal(in)
	if err != nil {
		panic("appmesh: deep copy: " + err.Error()) // unreachable for these types
	}
	out := new(T)
	if err := json.Unmarshal(b, out); err != nil {
		panic("appmesh: deep copy: " + err.Error())
	}
	return out
}

func (in *Mesh) DeepCopyObject() runtime.Object               { return deepCopy(in) }
func (in *MeshList) DeepCopyObject() runtime.Object           { return deepCopy(in) }
func (in *VirtualNode) DeepCopyObject() runtime.Object        { return deepCopy(in) }
func (in *VirtualNodeList) DeepCopyObject() runtime.Object    { return deepCopy(in) }
func (in *VirtualRouter) DeepCopyObject() runtime.Object      { return deepCopy(in) }
func (in *VirtualRouterList) DeepCopyObject() runtime.Object  { return deepCopy(in) }
func (in *VirtualService) DeepCopyObject() runtime.Object     { return deepCopy(in) }
func (in *VirtualServiceList) DeepCopyObject() runtime.Object { return deepCopy(in) }
