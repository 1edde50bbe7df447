package dataplane

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"secured.dev/operator/internal/render/cassandra"
	"secured.dev/operator/internal/render/vpn"
)

// The shipped WireGuard profile (scope NodeToNode): three Cassandra nodes on three hosts of a
// private underlay form their ring over wireguard-go (this machine's kernel has no WireGuard),
// a client on a fourth host writes a marker at consistency ALL, and the underlay never sees
// the marker or a single internode TCP segment outside the tunnel. A host outside the tunnel
// can reach neither the internode port nor, by routing to them, the tunnel addresses.
func TestCassandraOverWireGuard(t *testing.T) { testCassandraOverTunnel(t, "wireguard") }

// The shipped OpenVPN profile (AES-256-GCM, scope All): the same over one point-to-point
// OpenVPN tunnel per pair of members, with the client in the tunnel too, so nothing of the
// datastore crosses the underlay outside it.
func TestCassandraOverOpenVPN(t *testing.T) { testCassandraOverTunnel(t, "openvpn") }

func testCassandraOverTunnel(t *testing.T, profile string) {
	withCassandra(t)
	enc := ShippedProfile(t, profile, nil)
	nw := NewNetwork(t)
	names := []string{"dp-0", "dp-1", "dp-2"}
	var hosts []*Host
	var underlayNames []string
	for _, n := range names {
		h := nw.AddHost(t, n)
		hosts = append(hosts, h)
		underlayNames = append(underlayNames, h.Address.String())
	}
	client, outsider := nw.AddHost(t, "client"), nw.AddHost(t, "outsider")
	plan, err := vpn.NewPlan(*enc.VPN, names, underlayNames)
	if err != nil {
		t.Fatal(err)
	}
	secret := TunnelSecret(t, plan)
	start := time.Now()
	tunnels := map[string]*process{}
	for i, h := range hosts {
		tunnels[names[i]] = StartTunnel(t, h, plan, secret, names[i])
	}
	if plan.CarriesClients() {
		tunnels["client-0"] = StartTunnel(t, client, plan, secret, "client-0")
	}
	t.Logf("tunnel up in %s: %s", time.Since(start).Round(time.Millisecond), firstLine(tunnels[names[0]].Log(), "tunnel: "))

	seeds := cassandra.TunnelSeeds(plan)
	var nodes []*CassandraNode
	for i, h := range hosts {
		nodes = append(nodes, StartCassandra(t, Node{Address: h.Address.String(), Host: h, Tunnel: &plan, Name: names[i], Seeds: seeds, Step: cassandra.Target(enc)}))
	}
	t.Logf("3 nodes up in %s", time.Since(start).Round(time.Second))

	// The ring formed over the tunnel: every node is Up/Normal at its tunnel address (the
	// last one may still be finishing its join when it reports startup complete).
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
		status, err := nodes[0].Nodetool("status")
		if err != nil {
			t.Fatalf("nodetool status: %v\n%s", err, status)
		}
		var missing []string
		for _, m := range plan.Nodes() {
			if !strings.Contains(status, "UN  "+m.Address.String()) {
				missing = append(missing, fmt.Sprintf("%s at %s", m.Name, m.Address))
			}
		}
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("nodetool status does not show %v Up/Normal at their tunnel addresses:\n%s", missing, status)
		}
	}

	// The canary: a client writes a marker at consistency ALL, so it crosses the internode
	// channel to every replica. Out of the tunnel's scope, client traffic is not the
	// tunnel's to protect and stays out of the capture.
	target, filter := nodes[0].Address, "not tcp port 9042"
	if plan.CarriesClients() {
		target, filter = plan.Members[0].Address.String(), "ip"
	}
	cqlClient := CQLClient(t)
	marker := Marker(t)
	capture := nw.Capture(t, filter, func() {
		out, err := client.Command(cqlClient, "--hosts", fmt.Sprintf("%s:%d", target, cassandra.NativePort), "--value", marker).CombinedOutput()
		if err != nil {
			t.Fatalf("cql-client on the client host: %v\n%s", err, out)
		}
		t.Logf("cql-client: %s", strings.TrimSpace(string(out)))
	})
	if bytes.Contains(capture, []byte(marker)) {
		t.Error("the marker is on the underlay in clear")
	}
	var tunnelled, internode int
	for _, p := range Packets(capture) {
		switch {
		case p.Protocol == 17 && (tunnelPort(plan, p.SrcPort) || tunnelPort(plan, p.DstPort)):
			tunnelled++
		case p.Protocol == 6 && (p.SrcPort == cassandra.StoragePort || p.DstPort == cassandra.StoragePort) && p.Payload > 0:
			internode++
		}
	}
	if tunnelled < 10 {
		t.Errorf("the underlay carried %d tunnel packets while the client wrote: the canary saw no datastore traffic", tunnelled)
	}
	if internode > 0 {
		t.Errorf("the underlay carried %d internode TCP segments with data outside the tunnel", internode)
	}
	if plan.Type == "OpenVPN" && !strings.Contains(tunnels[names[0]].Log(), fmt.Sprintf("Data Channel: cipher '%s'", plan.Cipher)) {
		t.Errorf("no tunnel of %s reports the data channel cipher %s:\n%s", names[0], plan.Cipher, tail(tunnels[names[0]].Log(), 20))
	}
	t.Logf("canary: %d tunnel packets on the underlay, no marker, no internode segment", tunnelled)

	// Plaintext on the underlay is impossible for the channels in scope: the ports are not
	// bound to underlay addresses, and a host that routes to a tunnel address is dropped.
	first := plan.Members[0].Address
	if outsider.Dial(hosts[0].Address, cassandra.StoragePort, 2*time.Second) {
		t.Error("a host outside the tunnel reached the internode port on the underlay")
	}
	if got, want := outsider.Dial(hosts[0].Address, cassandra.NativePort, 2*time.Second), !plan.CarriesClients(); got != want {
		t.Errorf("a host outside the tunnel reaches CQL on the underlay: %v, want %v (scope %s)", got, want, plan.Scope)
	}
	outsider.Run(t, "ip", "route", "add", vpn.Subnet.String(), "via", hosts[0].Address.String())
	inScope := []int{cassandra.StoragePort}
	if plan.CarriesClients() {
		inScope = append(inScope, cassandra.NativePort)
	}
	for _, port := range inScope {
		if outsider.Dial(first, port, 2*time.Second) {
			t.Errorf("a host outside the tunnel reached %s:%d by routing to it over the underlay", first, port)
		}
		if !hosts[1].Dial(first, port, 5*time.Second) {
			t.Errorf("a member of the tunnel cannot reach %s:%d through it", first, port)
		}
	}
	// The rule is what stops it: without it, the routed connection opens.
	hosts[0].Run(t, "nft", "delete", "table", "inet", "secured_vpn")
	if !outsider.Dial(first, cassandra.StoragePort, 2*time.Second) {
		t.Error("without the sidecar's nftables rule the routed connection still fails: the check above proves nothing")
	}
}

func tunnelPort(p vpn.Plan, port uint16) bool {
	if p.Type == "WireGuard" {
		return port == vpn.WireGuardPort
	}
	return port >= vpn.OpenVPNBasePort && int(port) < vpn.OpenVPNBasePort+len(p.Members)
}

// firstLine returns the first line of log that starts with prefix.
func firstLine(log, prefix string) string {
	for _, l := range strings.Split(log, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}
