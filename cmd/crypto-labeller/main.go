// Command crypto-labeller labels its node with the CPU crypto features it really has, under
// Node Feature Discovery's label keys, for clusters without NFD. A person can hide features
// for experiments with the label crypto.secured.dev/hide-features (e.g. "AESNI.VAES"); the
// labeller then says so in crypto.secured.dev/hidden-features. It also labels whether the node's
// kernel encrypts with AES instructions (crypto.secured.dev/kernel-aes: accelerated or generic,
// from /proc/crypto), which decides what an encrypted volume costs. It writes with server-side apply
// as its own field manager, so it only ever adds or removes the labels it owns.
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"secured.dev/operator/internal/placement"
)

const fieldManager = "secured-crypto-labeller"

func main() {
	interval := flag.Duration("interval", 5*time.Minute, "longest wait between re-applying the labels; node changes trigger it at once")
	cpuinfoPath := flag.String("cpuinfo", "/proc/cpuinfo", "where to read CPU flags")
	procCryptoPath := flag.String("proc-crypto", "/proc/crypto", "where to read the kernel's cipher implementations")
	flag.Parse()
	node := os.Getenv("NODE_NAME")
	if node == "" {
		log.Fatal("NODE_NAME is not set: give it from the downward API (spec.nodeName)")
	}
	cfg, err := rest.InClusterConfig()
	if err != nil {
		log.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	f, err := os.Open(*cpuinfoPath)
	if err != nil {
		log.Fatal(err)
	}
	features := placement.Features(f)
	_ = f.Close()
	log.Printf("CPU crypto features of %s: %v", node, features)
	kernelAES := ""
	if f, err := os.Open(*procCryptoPath); err != nil {
		log.Printf("no %s label: %v", placement.KernelAESLabel, err)
	} else {
		driver, accelerated := placement.KernelAES(f)
		_ = f.Close()
		kernelAES = placement.KernelAESValue(driver, accelerated)
		log.Printf("the kernel of %s encrypts AES-XTS with %q: %s", node, driver, kernelAES)
	}
	for ctx.Err() == nil {
		if err := apply(ctx, cs, node, features, kernelAES); err != nil {
			log.Print(err)
		}
		waitForChange(ctx, cs, node, *interval)
	}
}

// waitForChange returns when the node changes (someone set hide-features) or after timeout.
func waitForChange(ctx context.Context, cs kubernetes.Interface, node string, timeout time.Duration) {
	secs := int64(timeout.Seconds())
	w, err := cs.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + node, TimeoutSeconds: &secs})
	if err != nil {
		log.Print(err)
		select {
		case <-ctx.Done():
		case <-time.After(timeout):
		}
		return
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		if ev.Type == watch.Modified {
			return
		}
	}
}

func apply(ctx context.Context, cs kubernetes.Interface, node string, features []string, kernelAES string) error {
	n, err := cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return err
	}
	labels := map[string]string{}
	// Node Feature Discovery labels the CPU of a node it runs on: never fight it.
	if _, nfd := n.Annotations["nfd.node.kubernetes.io/feature-labels"]; !nfd {
		labels = placement.Labels(features, n.Labels[placement.HideFeaturesLabel])
	}
	if kernelAES != "" {
		labels[placement.KernelAESLabel] = kernelAES
	}
	if len(labels) == 0 {
		return nil
	}
	_, err = cs.CoreV1().Nodes().Apply(ctx, corev1ac.Node(node).WithLabels(labels), metav1.ApplyOptions{FieldManager: fieldManager, Force: true})
	return err
}
