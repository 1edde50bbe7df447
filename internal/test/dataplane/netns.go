package dataplane

import (
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Network is a private underlay for tests that need several hosts: each host is a network
// namespace with one veth link to a bridge, which sits in a namespace of its own. Nothing
// touches this machine's own network; the namespaces go when the test ends, and with them
// every link and address.
type Network struct {
	prefix string
	bridge string // the bridge's namespace
	hosts  int
}

// Host is one network namespace on the underlay.
type Host struct {
	Name string
	NS   string
	// Address on the underlay (eth0).
	Address netip.Addr
}

// underlay addresses: 10.77.0.0/24 exists only inside the test's namespaces.
var underlay = netip.MustParsePrefix("10.77.0.0/24")

// networks numbers the networks of this test process.
var networks atomic.Int32

// NewNetwork creates the bridge namespace. It needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN)
// and iproute2.
func NewNetwork(t testing.TB) *Network {
	t.Helper()
	if _, err := exec.LookPath("ip"); err != nil {
		t.Fatalf("network namespaces need iproute2 (make prereqs installs it): %v", err)
	}
	// Tests in parallel get networks of their own.
	nw := &Network{prefix: fmt.Sprintf("sdt%d-%d", os.Getpid()%100000, networks.Add(1))}
	nw.bridge = nw.prefix + "-wire"
	t.Cleanup(func() { nw.remove(t) })
	run(t, "ip", "netns", "add", nw.bridge)
	run(t, "ip", "-n", nw.bridge, "link", "add", "br0", "type", "bridge")
	run(t, "ip", "-n", nw.bridge, "link", "set", "br0", "up")
	return nw
}

// AddHost creates a host with the next underlay address.
func (nw *Network) AddHost(t testing.TB, name string) *Host {
	t.Helper()
	nw.hosts++
	addr := underlay.Addr()
	for range nw.hosts {
		addr = addr.Next()
	}
	h := &Host{Name: name, NS: nw.prefix + "-" + name, Address: addr}
	port := fmt.Sprintf("p%d", nw.hosts)
	run(t, "ip", "netns", "add", h.NS)
	run(t, "ip", "link", "add", "eth0", "netns", h.NS, "type", "veth", "peer", "name", port, "netns", nw.bridge)
	run(t, "ip", "-n", nw.bridge, "link", "set", port, "master", "br0", "up")
	run(t, "ip", "-n", h.NS, "addr", "add", fmt.Sprintf("%s/%d", addr, underlay.Bits()), "dev", "eth0")
	run(t, "ip", "-n", h.NS, "link", "set", "eth0", "up")
	run(t, "ip", "-n", h.NS, "link", "set", "lo", "up")
	return h
}

// Command runs a program in the host's namespace.
func (h *Host) Command(name string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", h.NS, name}, args...)...)
}

// Wrap makes cmd, not yet started, run in the host's namespace, keeping its environment and
// context.
func (h *Host) Wrap(cmd *exec.Cmd) *exec.Cmd {
	ip, err := exec.LookPath("ip")
	if err != nil {
		cmd.Err = err
		return cmd
	}
	cmd.Args = append([]string{"ip", "netns", "exec", h.NS, cmd.Path}, cmd.Args[1:]...)
	cmd.Path = ip
	return cmd
}

// Run runs a program in the host's namespace and fails the test if it fails.
func (h *Host) Run(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := h.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s on %s: %v\n%s", name, h.Name, err, out)
	}
	return string(out)
}

// Dial reports whether a TCP connection from the host to address:port opens within timeout.
func (h *Host) Dial(address netip.Addr, port int, timeout time.Duration) bool {
	script := fmt.Sprintf("exec 3<>/dev/tcp/%s/%d", address, port)
	return h.Command("timeout", fmt.Sprint(timeout.Seconds()), "bash", "-c", script).Run() == nil
}

// Capture records the underlay's traffic on the bridge that matches the tcpdump filter while
// fn runs: what anybody on the pod network would see.
func (nw *Network) Capture(t testing.TB, filter string, fn func()) []byte {
	t.Helper()
	return capture(t, []string{"ip", "netns", "exec", nw.bridge}, "br0", filter, fn)
}

func (nw *Network) remove(t testing.TB) {
	out, _ := exec.Command("ip", "netns", "list").Output()
	for _, line := range strings.Split(string(out), "\n") {
		name, _, _ := strings.Cut(line, " ")
		if strings.HasPrefix(name, nw.prefix+"-") {
			if out, err := exec.Command("ip", "netns", "del", name).CombinedOutput(); err != nil {
				t.Logf("removing network namespace %s: %v %s", name, err, out)
			}
		}
	}
}

func run(t testing.TB, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}
