package dataplane

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"secured.dev/operator/internal/render/vpn"
	"secured.dev/operator/internal/test/gobuild"
	"secured.dev/operator/internal/test/samples"
)

// TunnelSecrets are the directories where the nodes' and the clients' tunnel Secrets are
// written as the sidecars see them mounted.
type TunnelSecrets struct{ Nodes, Clients string }

// TunnelSecret makes keys for every member of the plan and writes the tunnel Secrets the
// operator would render, each in a directory of its own, so that a member started from its
// side's directory proves that Secret holds all it needs.
func TunnelSecret(t testing.TB, plan vpn.Plan) TunnelSecrets {
	t.Helper()
	keys, _, err := vpn.Ensure(plan, vpn.Keys{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	nodes, clients, err := vpn.SecretData(plan, keys)
	if err != nil {
		t.Fatal(err)
	}
	write := func(data map[string][]byte) string {
		dir := t.TempDir()
		for name, b := range data {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	return TunnelSecrets{Nodes: write(nodes), Clients: write(clients)}
}

// StartTunnel runs the VPN sidecar's script on the host as member, with the tunnel Secret in
// dir, and waits until its tunnel address is up, as the pod's startup probe does.
func StartTunnel(t testing.TB, h *Host, plan vpn.Plan, dir, member string) *process {
	t.Helper()
	script := filepath.Join(samples.RepoRoot(), "images", "vpn", "bin", "tunnel")
	env := append(os.Environ(), "VPN_TYPE="+string(plan.Type), "VPN_DIR="+dir, "VPN_NAME="+member, "VPN_SUBNET="+vpn.Subnet.String(), "VPN_RESYNC=2", "VPN_STATE_DIR="+t.TempDir())
	// wireguard-go and wg meet at a socket under /run/wireguard, which network namespaces do
	// not separate: every host gets a private one, as every pod has.
	cmd := h.Command("sh", "-c", `mkdir -p /run/wireguard && mount -t tmpfs tmpfs /run/wireguard && exec "$0"`, script)
	cmd.Env = env
	p := launch(t, "tunnel of "+member, cmd)
	deadline := time.Now().Add(30 * time.Second)
	for {
		ready := h.Command(script, "ready")
		ready.Env = env
		if ready.Run() == nil {
			// The script must keep running: it resyncs peers for the pod's whole life.
			t.Cleanup(func() {
				if !p.alive() {
					t.Errorf("the tunnel script of %s exited during the test:\n%s", member, tail(p.Log(), 10))
				}
			})
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tunnel of %s is not up after 30s:\n%s", member, tail(p.Log(), 30))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// CQLClient builds cmd/cql-client, the client the e2e tests run as a Job, for tests that run
// it on a host of their own.
func CQLClient(t testing.TB) string {
	t.Helper()
	return gobuild.Command(t, "secured.dev/operator/cmd/cql-client")
}
