package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"loadgen/internal/testport"
	"loadgen/meshes/k8s/e2e/node"
)

// goTool is the go command that runs these tests.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return "/usr/local/go/bin/go" // where the Makefile puts Go on PATH
}

// buildLoadgen builds the real loadgen binary from the main module.
func buildLoadgen(t *testing.T, tags ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "loadgen")
	cmd := exec.Command(goTool(), "build", "-tags", strings.Join(tags, ","), "-o", out, "./cmd/loadgen")
	cmd.Dir = filepath.Join("..", "..", "..")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build loadgen: %v\n%s", err, b)
	}
	checkShippedClientGo(t, out, cmd.Dir)
	return out
}

// checkShippedClientGo fails a test whose loadgen binary was not built
// against the shipped module's client-go: this module replaces client-go
// by Kubernetes' own release (k8s.io/kubernetes needs its staging modules
// at one version), so the code compiled into the tests is not the code
// users run; every node test drives the binary, built by the main module,
// and this says so of each binary.
func checkShippedClientGo(t *testing.T, bin, mainDir string) {
	t.Helper()
	want, err := exec.Command(goTool(), "list", "-C", mainDir, "-m", "-f", "{{.Version}}", "k8s.io/client-go").Output()
	if err != nil {
		t.Fatalf("the main module's client-go: %v", err)
	}
	info, err := exec.Command(goTool(), "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m %s: %v", bin, err)
	}
	line := "\tk8s.io/client-go\t" + strings.TrimSpace(string(want)) + "\t"
	if !strings.Contains(string(info), "\tdep"+line) {
		t.Fatalf("the loadgen under test is not built with the shipped client-go %s:\n%s", strings.TrimSpace(string(want)), info)
	}
}

// startHTTPBin runs `loadgen serve httpbin` on loopback and returns its URL.
func startHTTPBin(t *testing.T, bin string) string {
	t.Helper()
	addr := testport.Held(t) // the command binds it
	cmd := exec.Command(bin, "serve", "httpbin", "--addr", addr, "--for", "10m")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	url := "http://" + addr
	for range 100 {
		if resp, err := http.Get(url + "/healthz"); err == nil {
			resp.Body.Close()
			return url
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("httpbin on %s did not come up", addr)
	return ""
}

// moduleDir is where the go command keeps a module of this build.
func moduleDir(t *testing.T, mod string) string {
	t.Helper()
	d, err := node.ModuleDir(".", mod)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// installCRDs installs the CRD manifests shipped in the Gateway API and
// Istio modules, as their installers do, and waits until each is served.
func installCRDs(t *testing.T, config *restclient.Config) {
	t.Helper()
	files, err := node.GatewayAPICRDs(".")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(moduleDir(t, "istio.io/api"), "kubernetes", "customresourcedefinitions.gen.yaml"))
	names := installCRDFiles(t, config, files)
	t.Logf("installed %d CRDs from the Gateway API and Istio modules", len(names))
}

// installAppMeshCRDs installs the App Mesh controller's CRDs (testdata,
// with their source) and returns a func that removes them again, so that
// the tests of a cluster without App Mesh still see one.
func installAppMeshCRDs(t *testing.T, config *restclient.Config) (remove func()) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "appmesh-crds", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("App Mesh CRDs: %v", err)
	}
	names := installCRDFiles(t, config, files)
	return func() {
		ac := apiextensionsclient.NewForConfigOrDie(config)
		ctx := context.Background()
		for _, n := range names {
			if err := ac.ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, n, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("remove CRD %s: %v", n, err)
			}
		}
		deadline := time.Now().Add(60 * time.Second)
		for _, n := range names {
			for {
				if _, err := ac.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, n, metav1.GetOptions{}); apierrors.IsNotFound(err) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("CRD %s not removed", n)
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
	}
}

// installCRDFiles creates the CRDs of the YAML files and waits until each
// is established.
func installCRDFiles(t *testing.T, config *restclient.Config, files []string) []string {
	t.Helper()
	names, err := node.InstallCRDs(context.Background(), config, files)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// writeKubeconfig writes a kubeconfig for the test API server, as a user
// of a real cluster has one.
func writeKubeconfig(t *testing.T, c *cluster, server string) string {
	t.Helper()
	rc := restclient.CopyConfig(c.Config)
	if err := restclient.LoadTLSFiles(rc); err != nil {
		t.Fatal(err)
	}
	cfg := clientcmdapi.NewConfig()
	// The loopback certificate names apiserver-loopback-client.
	cfg.Clusters["e2e"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: rc.CAData, TLSServerName: rc.ServerName}
	cfg.AuthInfos["e2e"] = &clientcmdapi.AuthInfo{Token: rc.BearerToken,
		ClientCertificateData: rc.CertData, ClientKeyData: rc.KeyData}
	cfg.Contexts["e2e-context"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: "e2e"}
	cfg.CurrentContext = "e2e-context"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// result is a finished command.
type result struct {
	code           int
	stdout, stderr string
}

// loadgen runs the CLI with a kubeconfig and a bound.
func runLoadgen(t *testing.T, bin, kubeconfig string, timeout time.Duration, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("loadgen %s: %v", strings.Join(args, " "), err)
	}
	return r
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}
