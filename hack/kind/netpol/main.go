// Command netpol enforces NetworkPolicies' ingress rules on a node of the offline Kind
// clusters, so that a policy means there what it means on a user's cluster. Upstream Kind
// uses sigs.k8s.io/kube-network-policies, which hands packets to user space through nftables'
// queue statement; this machine's kernel is built without it (CONFIG_NFT_QUEUE), so netpol
// writes each policy as static nftables rules instead: per pod on this node that an ingress
// policy selects, the source addresses and ports its rules admit, and a drop for the rest.
// Rules are recomputed from the API on every change and replaced in one nft transaction.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

func main() {
	resync := flag.Duration("resync", 30*time.Second, "how often the rules are rewritten even without a change (someone may have flushed them)")
	flag.Parse()
	node := os.Getenv("NODE_NAME")
	if node == "" {
		log.Fatal("NODE_NAME is not set (give it from the downward API: spec.nodeName)")
	}
	cfg, err := rest.InClusterConfig()
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, kubernetes.NewForConfigOrDie(cfg), node, *resync); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, cs kubernetes.Interface, node string, resync time.Duration) error {
	factory := informers.NewSharedInformerFactory(cs, 0)
	pods := factory.Core().V1().Pods()
	namespaces := factory.Core().V1().Namespaces()
	policies := factory.Networking().V1().NetworkPolicies()
	changed := make(chan struct{}, 1)
	poke := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { poke() },
		UpdateFunc: func(any, any) { poke() },
		DeleteFunc: func(any) { poke() },
	}
	for _, inf := range []cache.SharedIndexInformer{pods.Informer(), namespaces.Informer(), policies.Informer()} {
		if _, err := inf.AddEventHandler(handler); err != nil {
			return err
		}
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), pods.Informer().HasSynced, namespaces.Informer().HasSynced, policies.Informer().HasSynced) {
		return ctx.Err()
	}
	log.Printf("enforcing NetworkPolicy ingress rules on node %s (nftables table inet %s)", node, table)
	tick := time.NewTicker(resync)
	defer tick.Stop()
	e := enforcer{node: node, nft: []string{"nft"}, guarded: -1}
	for {
		var c cluster
		for _, p := range must(pods.Lister().List(labels.Everything())) {
			c.pods = append(c.pods, *p)
		}
		for _, n := range must(namespaces.Lister().List(labels.Everything())) {
			c.namespaces = append(c.namespaces, *n)
		}
		for _, p := range must(policies.Lister().List(labels.Everything())) {
			c.policies = append(c.policies, *p)
		}
		// On an error the rules in place stay: dropping them would open every guarded pod.
		if err := e.apply(c); err != nil {
			log.Print(err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
			// Let a burst of events (a StatefulSet's pods, a namespace's policies) settle.
			time.Sleep(200 * time.Millisecond)
		case <-tick.C:
			e.script = ""
		}
	}
}

// enforcer remembers what it wrote last, so that an unchanged ruleset is not rewritten.
type enforcer struct {
	node    string
	nft     []string // the command that reads a script on stdin, without its -f -
	script  string
	guarded int
}

func (e *enforcer) apply(c cluster) error {
	guarded, err := compile(e.node, c)
	if err != nil {
		return fmt.Errorf("rules not changed: %w", err)
	}
	script := render(guarded)
	if script == e.script {
		return nil
	}
	cmd := exec.Command(e.nft[0], append(e.nft[1:], "-f", "-")...)
	cmd.Stdin = bytes.NewBufferString(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("nft -f: %v: %s", err, out)
	}
	if len(guarded) != e.guarded {
		log.Printf("%d pods on this node guarded", len(guarded))
	}
	e.script, e.guarded = script, len(guarded)
	return nil
}

// must passes on a lister's result; listing an informer's cache with Everything cannot fail.
func must[T any](items []T, err error) []T {
	if err != nil {
		log.Print(err)
	}
	return items
}
