package node

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// ModuleDir is where the go command keeps a module of this module's build
// (run in dir, this module's directory or below it).
func ModuleDir(dir, mod string) (string, error) {
	cmd := exec.Command(goCommand(), "list", "-m", "-f", "{{.Dir}}", mod)
	cmd.Dir = dir
	b, err := cmd.Output()
	if err != nil || len(bytes.TrimSpace(b)) == 0 {
		return "", fmt.Errorf("go list -m %s: %v", mod, err)
	}
	return string(bytes.TrimSpace(b)), nil
}

// GatewayAPICRDs are the Gateway API's standard-channel CRD manifests, as
// its module ships them (config/crd/standard), at the version this module
// requires.
func GatewayAPICRDs(dir string) ([]string, error) {
	d, err := ModuleDir(dir, "sigs.k8s.io/gateway-api")
	if err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(d, "config", "crd", "standard", "gateway.networking.k8s.io_*.yaml"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no Gateway API CRDs in %s: %v", d, err)
	}
	return files, nil
}

// InstallCRDs creates the CRDs of the YAML files, as their installers'
// `kubectl apply` does (one already there is left as it is), and waits
// until each is established; it returns their names.
func InstallCRDs(ctx context.Context, config *rest.Config, files []string) ([]string, error) {
	ac, err := apiextensionsclient.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return names, err
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := r.Read()
			if err != nil {
				break
			}
			var crd apiextensionsv1.CustomResourceDefinition
			if err := yaml.Unmarshal(doc, &crd); err != nil {
				return names, fmt.Errorf("%s: %w", f, err)
			}
			if crd.Kind != "CustomResourceDefinition" {
				continue
			}
			if _, err := ac.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, &crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return names, fmt.Errorf("install CRD %s: %w", crd.Name, err)
			}
			names = append(names, crd.Name)
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for _, n := range names {
		for {
			crd, err := ac.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, n, metav1.GetOptions{})
			if err == nil && established(crd) {
				break
			}
			if time.Now().After(deadline) {
				return names, fmt.Errorf("CRD %s not established within 60 s", n)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return names, nil
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}
