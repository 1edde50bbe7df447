// Command podnet is the pod network of the offline Kind clusters (our stand-in for kindnetd,
// which is not buildable from the Go module proxy). On each node it writes a CNI configuration
// that gives pods addresses from the node's podCIDR through the ptp plugin, and keeps a route
// to every other node's podCIDR via that node's address, so pods reach each other across nodes.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const conflist = `{
  "cniVersion": "0.4.0",
  "name": "podnet",
  "plugins": [
    {"type": "ptp", "ipMasq": false, "mtu": 1500,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": %q}]], "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`

func main() {
	confDir := flag.String("cni-conf-dir", "/etc/cni/net.d", "where the CNI configuration is written")
	interval := flag.Duration("interval", 10*time.Second, "how often routes are reconciled")
	flag.Parse()
	node := os.Getenv("NODE_NAME")
	if node == "" {
		log.Fatal("NODE_NAME is not set (give it from the downward API: spec.nodeName)")
	}
	cfg, err := rest.InClusterConfig()
	if err != nil {
		log.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	for {
		if err := sync(context.Background(), cs, node, *confDir); err != nil {
			log.Print(err)
		}
		time.Sleep(*interval)
	}
}

func sync(ctx context.Context, cs kubernetes.Interface, self, confDir string) error {
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing nodes: %w", err)
	}
	for _, n := range nodes.Items {
		if n.Spec.PodCIDR == "" {
			continue
		}
		if n.Name == self {
			if err := writeConf(confDir, n.Spec.PodCIDR); err != nil {
				return err
			}
			continue
		}
		ip := internalIP(n)
		if ip == "" {
			continue
		}
		if out, err := exec.Command("ip", "route", "replace", n.Spec.PodCIDR, "via", ip).CombinedOutput(); err != nil {
			return fmt.Errorf("route to %s via %s: %v: %s", n.Spec.PodCIDR, ip, err, out)
		}
	}
	return nil
}

func writeConf(dir, podCIDR string) error {
	path := filepath.Join(dir, "10-podnet.conflist")
	want := fmt.Sprintf(conflist, podCIDR)
	if have, err := os.ReadFile(path); err == nil && string(have) == want {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(want), 0o644); err != nil {
		return err
	}
	log.Printf("pod network %s on this node", podCIDR)
	return os.Rename(tmp, path) // the runtime never sees a half-written file
}

func internalIP(n corev1.Node) string {
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	return ""
}
