package dataplane

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/cassandra"
	"secured.dev/operator/internal/render/vpn"
)

// The operator's stages take a live 3-node ring into the shipped WireGuard tunnel and out of
// it again, one node restart at a time in the StatefulSet's order, under an application that
// writes 20 rows a second at QUORUM from a host of its own: no write fails, every acknowledged
// one reads back, and after every restart all three nodes are Up/Normal and a write at
// consistency ALL (which crosses the internode channel between moved and unmoved nodes)
// succeeds. In the tunnel every node is Up/Normal at its tunnel address, out of it at its
// underlay address, and no node is left behind at an address it had.
func TestCassandraTunnelComesAndGoesLiveInStages(t *testing.T) {
	withCassandra(t)
	tunnelled := ShippedProfile(t, "wireguard", nil)
	plain := tunnelled
	plain.VPN = nil

	nw := NewNetwork(t)
	names := []string{"dp-0", "dp-1", "dp-2"}
	var hosts []*Host
	var underlay, nativeAddrs []string
	for _, n := range names {
		h := nw.AddHost(t, n)
		hosts = append(hosts, h)
		underlay = append(underlay, h.Address.String())
		nativeAddrs = append(nativeAddrs, fmt.Sprintf("%s:%d", h.Address, cassandra.NativePort))
	}
	client := nw.AddHost(t, "client")
	plan, err := vpn.NewPlan(*tunnelled.VPN, names, underlay)
	if err != nil {
		t.Fatal(err)
	}
	secret := TunnelSecret(t, plan)

	start := time.Now()
	var nodes []*CassandraNode
	for i, h := range hosts {
		nodes = append(nodes, StartCassandra(t, Node{Address: h.Address.String(), Host: h, Name: names[i], Seeds: underlay[:1], Step: cassandra.Target(plain)}))
	}
	cqlClient := CQLClient(t)
	writeAtAll := func(when string) {
		t.Helper()
		if out, err := client.Command(cqlClient, "--hosts", strings.Join(nativeAddrs, ",")).CombinedOutput(); err != nil {
			t.Fatalf("%s: a write at consistency ALL failed: %v\n%s", when, err, out)
		}
	}
	ringFormed(t, nodes, "the plaintext ring")
	writeAtAll("the plaintext ring")
	t.Logf("plaintext ring of 3 up in %s", time.Since(start).Round(time.Second))

	stop := filepath.Join(t.TempDir(), "stop")
	app := launch(t, "steady client", client.Command(cqlClient, "--hosts", strings.Join(nativeAddrs, ","), "--rate", "20", "--for", "20m", "--stop-file", stop))

	tunnels := map[int]*process{}
	// restart is a pod restart with the next step: the sidecar comes or goes with the pod, and
	// the node binds its tunnel address only once the step puts it in the tunnel.
	restart := func(i int, step cassandra.Step) {
		n := nodes[i]
		n.stop()
		withTunnel := step.Encryption.VPN != nil
		switch p := tunnels[i]; {
		case withTunnel && p == nil:
			tunnels[i] = StartTunnel(t, hosts[i], plan, secret, names[i])
		case !withTunnel && p != nil:
			p.stop()
			delete(tunnels, i)
		}
		n.Tunnel, n.Seeds = nil, underlay[:1]
		if withTunnel && !step.TunnelStandby {
			n.Tunnel, n.Seeds = &plan, cassandra.TunnelSeeds(plan)
		}
		n.Step = step
		n.render(t)
		n.launch(t)
	}
	move := func(to v1alpha1.EffectiveEncryption, rolls int) {
		t.Helper()
		applied := nodes[0].Step
		var steps []string
		for !reflect.DeepEqual(applied, cassandra.Target(to)) {
			next := cassandra.Next(&applied, to)
			steps = append(steps, cassandra.Describe(&applied, next))
			began := time.Now()
			for i := len(nodes) - 1; i >= 0; i-- {
				restart(i, next)
				when := fmt.Sprintf("%s on %s", next, names[i])
				ringFormed(t, nodes, when)
				writeAtAll(when)
			}
			t.Logf("roll %q: 3 nodes restarted, each then healthy, in %s", steps[len(steps)-1], time.Since(began).Round(time.Second))
			applied = next
		}
		if len(steps) != rolls {
			t.Fatalf("%d rolls (%q), want %d", len(steps), steps, rolls)
		}
	}
	atAddresses := func(want func(int) string, when string) {
		t.Helper()
		status, err := nodes[0].Nodetool("status")
		if err != nil {
			t.Fatalf("nodetool status: %v\n%s", err, status)
		}
		for i := range nodes {
			if !strings.Contains(status, "UN  "+want(i)+" ") {
				t.Errorf("%s: %s is not Up/Normal at %s:\n%s", when, names[i], want(i), status)
			}
		}
		if lines := strings.Count(status, "\nUN ") + strings.Count(status, "\nDN ") + strings.Count(status, "\nUJ ") + strings.Count(status, "\nUL "); lines != len(nodes) {
			t.Errorf("%s: the ring lists %d endpoints for %d nodes (an address left behind):\n%s", when, lines, len(nodes), status)
		}
	}

	move(tunnelled, 2)
	atAddresses(func(i int) string { return plan.Nodes()[i].Address.String() }, "in the tunnel")
	move(plain, 2)
	atAddresses(func(i int) string { return underlay[i] }, "out of the tunnel")

	if err := os.WriteFile(stop, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	select {
	case <-app.exited:
	case <-time.After(2 * time.Minute):
		t.Fatalf("the steady client did not stop:\n%s", tail(app.Log(), 10))
	}
	var s struct {
		Writes, Failed, Acknowledged, ReadBack, Lost int
		FirstFailure                                 string
		SlowestMillis                                int64
		Seconds                                      float64
	}
	log := strings.TrimSpace(app.Log())
	if err := json.Unmarshal([]byte(log[strings.LastIndexByte(log, '\n')+1:]), &s); err != nil {
		t.Fatalf("the steady client's summary: %v\n%s", err, tail(log, 10))
	}
	t.Logf("steady client over %.0f s: %d writes at QUORUM, %d failed, %d acknowledged, %d read back, %d lost, slowest %d ms; summary %s after the stop file",
		s.Seconds, s.Writes, s.Failed, s.Acknowledged, s.ReadBack, s.Lost, s.SlowestMillis, time.Since(stopped).Round(time.Second))
	if s.Writes < int(s.Seconds*20*0.9) {
		t.Errorf("the client wrote %d rows in %.0f s: it did not keep its rate of 20 per second, so it measured less than the rolls", s.Writes, s.Seconds)
	}
	if s.Failed > 0 || s.Lost > 0 || s.ReadBack != s.Acknowledged {
		t.Errorf("the application saw %d failed writes (first: %s) and lost %d acknowledged ones", s.Failed, s.FirstFailure, s.Lost)
	}
}
