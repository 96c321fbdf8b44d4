package e2e

import (
	"context"
	"path"
	"testing"
	"time"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/storage/etcd3/testserver"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	cacheddiscovery "k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/controller-manager/pkg/informerfactory"
	kubeapiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
	"k8s.io/kubernetes/pkg/controller/garbagecollector"
	jobcontroller "k8s.io/kubernetes/pkg/controller/job"
)

// cluster is a real kube-apiserver on loopback, backed by an embedded etcd,
// with the real Job controller and garbage collector running beside it. No
// scheduler and no kubelet: the tests play the kubelet (kubelet_test.go).
type cluster struct {
	Config *restclient.Config
	Client clientset.Interface
	// Host and Port of the API server, as a kubelet would give a pod in
	// KUBERNETES_SERVICE_HOST/PORT.
	Host, Port string
}

// startCluster starts the cluster for the test and stops it at its end.
func startCluster(t *testing.T) *cluster {
	t.Helper()
	etcd := testserver.RunEtcd(t, nil)
	storage := storagebackend.NewDefaultConfig(path.Join(uuid.New().String(), "registry"), nil)
	storage.Transport.ServerList = etcd.Endpoints()
	flags := []string{
		"--endpoint-reconciler-type=none",            // no Endpoints for 127.0.0.1 to reconcile
		"--disable-admission-plugins=ServiceAccount", // no token controller runs here
	}
	srv, err := kubeapiservertesting.StartTestServer(t, nil, flags, storage)
	if err != nil {
		t.Fatalf("kube-apiserver: %v", err)
	}
	t.Cleanup(srv.TearDownFn)
	cfg := restclient.CopyConfig(srv.ClientConfig)
	cfg.QPS, cfg.Burst = 200, 400
	client := clientset.NewForConfigOrDie(cfg)

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	startControllers(t, ctx, cfg, client)
	u, port := hostPort(t, cfg.Host)
	return &cluster{Config: cfg, Client: client, Host: u, Port: port}
}

// startControllers runs the Job controller and the garbage collector, as
// kube-controller-manager would, until ctx ends.
func startControllers(t *testing.T, ctx context.Context, cfg *restclient.Config, client clientset.Interface) {
	t.Helper()
	factory := informers.NewSharedInformerFactory(client, 0)
	jobs, err := jobcontroller.NewController(ctx, factory.Core().V1().Pods(), factory.Batch().V1().Jobs(), client)
	if err != nil {
		t.Fatalf("job controller: %v", err)
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	metaFactory := metadatainformer.NewSharedInformerFactory(meta, 0)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(cacheddiscovery.NewMemCacheClient(client.Discovery()))
	started := make(chan struct{})
	close(started)
	gc, err := garbagecollector.NewGarbageCollector(ctx, client, meta, mapper, garbagecollector.DefaultIgnoredResources(),
		informerfactory.NewInformerFactory(factory, metaFactory), started)
	if err != nil {
		t.Fatalf("garbage collector: %v", err)
	}
	factory.Start(ctx.Done())
	metaFactory.Start(ctx.Done())
	go jobs.Run(ctx, 2)
	const sync = 2 * time.Second
	go wait.Until(mapper.Reset, sync, ctx.Done())
	go gc.Run(ctx, 2, sync)
	go gc.Sync(ctx, client.Discovery(), sync)
}
