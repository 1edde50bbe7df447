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

// TunnelFiles are the tunnel as a member sees it: Public is the directory of the public
// Secret, which every sidecar mounts; Keys holds each member's private key in a file of its
// own, as the key server hands it to that member alone.
type TunnelFiles struct {
	Public string
	Keys   map[string]string
}

// TunnelSecret makes keys for every member of the plan and writes the operator's public
// Secret and each member's key, so that a member started from the public directory and its
// own key proves that nothing else is needed.
func TunnelSecret(t testing.TB, plan vpn.Plan) TunnelFiles {
	t.Helper()
	keys, _, err := vpn.Ensure(plan, vpn.Keys{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	public, private, err := vpn.SecretData(plan, keys, nil)
	if err != nil {
		t.Fatal(err)
	}
	files := TunnelFiles{Public: t.TempDir(), Keys: map[string]string{}}
	write := func(path string, b []byte) {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for name, b := range public {
		write(filepath.Join(files.Public, name), b)
	}
	for _, m := range plan.Members {
		files.Keys[m.Name] = filepath.Join(t.TempDir(), "key")
		write(files.Keys[m.Name], private[vpn.KeyFile(m.Name)])
	}
	return files
}

// StartTunnel runs the VPN sidecar's script on the host as member, with the public tunnel
// Secret and the member's own key, and waits until its tunnel address is up, as the pod's
// startup probe does.
func StartTunnel(t testing.TB, h *Host, plan vpn.Plan, files TunnelFiles, member string) *process {
	t.Helper()
	script := filepath.Join(samples.RepoRoot(), "images", "vpn", "bin", "tunnel")
	env := append(os.Environ(), "VPN_TYPE="+string(plan.Type), "VPN_DIR="+files.Public, "VPN_KEY_FILE="+files.Keys[member], "VPN_NAME="+member, "VPN_SUBNET="+vpn.Subnet.String(), "VPN_RESYNC=2", "VPN_STATE_DIR="+t.TempDir())
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
				if !p.alive() && !p.stoppedByTest() {
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
