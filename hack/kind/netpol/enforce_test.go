package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"sigs.k8s.io/yaml"

	"secured.dev/operator/internal/test/tier"
)

// The policy the operator renders for a Cassandra datastore, enforced by the rules netpol
// writes, on a node built as the Kind nodes' pod network builds it: each pod a network
// namespace with a point-to-point veth to the node, which routes between them. Real packets,
// real nftables; nothing outside the test's namespaces.
func TestTheOperatorsPolicyIsEnforcedOnARoutedNode(t *testing.T) {
	tier.Full(t, "network namespaces and nftables")
	n := newRoutedNode(t)
	cassandra := map[string]string{"app.kubernetes.io/name": "cassandra", "app.kubernetes.io/instance": "orders"}
	operator := map[string]string{"app.kubernetes.io/component": "operator", "app.kubernetes.io/name": "secured-datastore-operator"}
	db := n.addPod(t, pod("shop", "orders-0", "10.244.1.10", cassandra), 9042, 7000, 7199)
	client := n.addPod(t, pod("shop", "bench", "10.244.1.11", nil), 8080)
	stranger := n.addPod(t, pod("elsewhere", "curious", "10.244.1.12", nil))
	op := n.addPod(t, pod("secured-system", "operator", "10.244.1.13", operator))
	c := cluster{
		pods: []corev1.Pod{db.pod, client.pod, stranger.pod, op.pod},
		namespaces: []corev1.Namespace{
			namespace("shop", map[string]string{"kubernetes.io/metadata.name": "shop"}),
			namespace("elsewhere", map[string]string{"kubernetes.io/metadata.name": "elsewhere"}),
			namespace("secured-system", map[string]string{"kubernetes.io/metadata.name": "secured-system"}),
		},
	}
	e := enforcer{node: node, nft: []string{"ip", "netns", "exec", n.ns, "nft"}, guarded: -1}
	if !stranger.reaches(t, db, 9042) {
		t.Fatal("without rules the stranger cannot reach the database: the test's network does not route")
	}

	c.policies = []networkingv1.NetworkPolicy{renderedPolicy(t)}
	if err := e.apply(c); err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct {
		from *netPod
		to   *netPod
		port int
		open bool
	}{
		{client, db, 9042, true},       // a pod of the datastore's namespace on CQL
		{client, db, 7000, false},      // but not on the internode port
		{client, db, 7199, false},      // nor JMX, which no rule names
		{op, db, 9042, true},           // the operator's prober on both ports
		{op, db, 7000, true},           //
		{stranger, db, 9042, false},    // another namespace's pod on nothing
		{stranger, db, 7000, false},    //
		{stranger, client, 8080, true}, // a pod no policy selects stays open
	} {
		if got := want.from.reaches(t, want.to, want.port); got != want.open {
			t.Errorf("%s → %s:%d: open = %v, want %v", want.from.pod.Name, want.to.pod.Name, want.port, got, want.open)
		}
	}

	// Rules are replaced in one transaction: without the policy the database is open again.
	c.policies = nil
	if err := e.apply(c); err != nil {
		t.Fatal(err)
	}
	if !stranger.reaches(t, db, 9042) {
		t.Error("the policy is gone but the stranger still cannot reach the database")
	}
}

// renderedPolicy is the NetworkPolicy of the operator's golden Cassandra datastore "orders".
func renderedPolicy(t *testing.T) networkingv1.NetworkPolicy {
	t.Helper()
	data, err := os.ReadFile("../../../internal/render/cassandra/testdata/orders.objects.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var p networkingv1.NetworkPolicy
		if err := yaml.Unmarshal([]byte(doc), &p); err != nil {
			t.Fatal(err)
		}
		if p.Kind == "NetworkPolicy" {
			return p
		}
	}
	t.Fatal("no NetworkPolicy in the golden objects")
	return networkingv1.NetworkPolicy{}
}

type routedNode struct {
	prefix, ns string
	pods       int
}

type netPod struct {
	pod corev1.Pod
	ns  string
}

func newRoutedNode(t *testing.T) *routedNode {
	t.Helper()
	n := &routedNode{prefix: fmt.Sprintf("snp%d", os.Getpid()%100000)}
	n.ns = n.prefix + "-node"
	t.Cleanup(func() {
		for i := 0; i <= n.pods; i++ {
			ns := n.ns
			if i > 0 {
				ns = fmt.Sprintf("%s-pod%d", n.prefix, i)
			}
			if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil {
				t.Logf("removing %s: %v %s", ns, err, out)
			}
		}
	})
	sh(t, "ip", "netns", "add", n.ns)
	sh(t, "ip", "netns", "exec", n.ns, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1")
	return n
}

// addPod wires a pod as the ptp CNI plugin does: the pod's address alone on its eth0, a
// default route through the node's end of the veth, and a host route on the node back to it.
// The pod listens on ports until the test ends.
func (n *routedNode) addPod(t *testing.T, p corev1.Pod, ports ...int) *netPod {
	t.Helper()
	n.pods++
	np := &netPod{pod: p, ns: fmt.Sprintf("%s-pod%d", n.prefix, n.pods)}
	veth := fmt.Sprintf("veth%d", n.pods)
	ip := p.Status.PodIP
	sh(t, "ip", "netns", "add", np.ns)
	sh(t, "ip", "link", "add", "eth0", "netns", np.ns, "type", "veth", "peer", "name", veth, "netns", n.ns)
	sh(t, "ip", "-n", np.ns, "addr", "add", ip+"/32", "dev", "eth0")
	sh(t, "ip", "-n", np.ns, "link", "set", "eth0", "up")
	sh(t, "ip", "-n", np.ns, "link", "set", "lo", "up")
	sh(t, "ip", "-n", n.ns, "addr", "add", "169.254.1.1/32", "dev", veth)
	sh(t, "ip", "-n", n.ns, "link", "set", veth, "up")
	sh(t, "ip", "-n", n.ns, "route", "add", ip+"/32", "dev", veth)
	sh(t, "ip", "-n", np.ns, "route", "add", "169.254.1.1", "dev", "eth0", "scope", "link")
	sh(t, "ip", "-n", np.ns, "route", "add", "default", "via", "169.254.1.1", "dev", "eth0")
	for _, port := range ports {
		var l net.Listener
		inNetns(t, np.ns, func() (err error) {
			l, err = net.Listen("tcp", fmt.Sprintf("%s:%d", ip, port))
			return err
		})
		t.Cleanup(func() { _ = l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				_ = c.Close()
			}
		}()
	}
	return np
}

// reaches reports whether a TCP connection from p to to's port opens; a dropped SYN times out.
func (p *netPod) reaches(t *testing.T, to *netPod, port int) bool {
	t.Helper()
	var open bool
	inNetns(t, p.ns, func() error {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("%s:%d", to.pod.Status.PodIP, port), time.Second)
		if err == nil {
			open = true
			_ = c.Close()
		}
		return nil
	})
	return open
}

// inNetns runs fn on a thread moved into the named network namespace; sockets made there stay
// in it. The thread is never unlocked, so the runtime retires it with the goroutine instead
// of handing a thread in the wrong namespace to other code.
func inNetns(t *testing.T, ns string, fn func() error) {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		f, err := os.Open("/var/run/netns/" + ns)
		if err != nil {
			errc <- err
			return
		}
		defer func() { _ = f.Close() }()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("setns %s: %w", ns, err)
			return
		}
		errc <- fn()
	}()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

func sh(t *testing.T, name string, args ...string) {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	}
}
