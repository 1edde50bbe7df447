package dataplane

import (
	"bytes"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/hbase"
	"secured.dev/operator/internal/render/vpn"
)

// The shipped WireGuard profile on HBase (whose tunnel always carries clients: scope All):
// ZooKeeper, the NameNode, the DataNode, the Master and the RegionServer each on a host of a
// private underlay, each known to the others by its tunnel address and bound to it, as the
// operator configures their pods; a client in the tunnel creates, puts, gets and scans a
// marker, and the underlay carries nothing of it but tunnel packets. A host outside the tunnel
// reaches no role's port, neither at the underlay address nor by routing to the tunnel.
func TestHBaseOverWireGuard(t *testing.T) {
	testHBaseOverTunnel(t, hbaseProfile(t, "wireguard", &v1alpha1.EncryptionSettings{VPN: &v1alpha1.VPNSettings{Scope: v1alpha1.VPNScopeAll}}))
}

// The shipped OpenVPN profile (AES-256-GCM, scope All) on HBase: seed 001's VPN strategy.
func TestHBaseOverOpenVPN(t *testing.T) { testHBaseOverTunnel(t, hbaseProfile(t, "openvpn", nil)) }

func testHBaseOverTunnel(t *testing.T, enc v1alpha1.EffectiveEncryption) {
	nw := NewNetwork(t)
	names := []string{"zk-0", "nn-0", "dn-0", "master-0", "rs-0"}
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
	tunnels["client-0"] = StartTunnel(t, client, plan, secret, "client-0")
	t.Logf("tunnel up in %s: %s", time.Since(start).Round(time.Millisecond), firstLine(tunnels[names[0]].Log(), "tunnel: "))

	// Every role is known by its tunnel address, as the operator renders the pods' files.
	at := map[string]string{}
	on := map[string]*Host{}
	for i, m := range plan.Nodes() {
		at[m.Name] = m.Address.String()
		on[m.Address.String()] = hosts[i]
	}
	c := StartHBaseClusterInTunnel(t, enc, HBaseHosts{ZooKeeper: at["zk-0"], NameNode: at["nn-0"], DataNode: at["dn-0"], Master: at["master-0"], RegionServer: at["rs-0"]}, on, client)
	t.Logf("HBase in the tunnel up in %s", time.Since(start).Round(time.Second))

	// The canary: everything the client and the roles exchange while the client writes and
	// reads a marker (HBase RPC, ZooKeeper, HDFS RPC and block transfer) is on the underlay,
	// and all of it must be tunnel packets.
	marker := Marker(t)
	capture := nw.Capture(t, "ip", func() {
		if err := c.Smoke(t, "tunnelled", marker); err != nil {
			t.Fatalf("create, put, get, scan through the tunnel: %v", err)
		}
	})
	if bytes.Contains(capture, []byte(marker)) {
		t.Error("the marker is on the underlay in clear")
	}
	var tunnelled, tcp int
	for _, p := range Packets(capture) {
		switch {
		case p.Protocol == 17 && (tunnelPort(plan, p.SrcPort) || tunnelPort(plan, p.DstPort)):
			tunnelled++
		case p.Protocol == 6 && p.Payload > 0:
			tcp++
		}
	}
	if tunnelled < 100 {
		t.Errorf("the underlay carried %d tunnel packets while the client wrote: the canary saw no datastore traffic", tunnelled)
	}
	if tcp > 0 {
		t.Errorf("the underlay carried %d TCP segments with data outside the tunnel", tcp)
	}
	if plan.Type == v1alpha1.VPNOpenVPN && !strings.Contains(tunnels[names[0]].Log(), fmt.Sprintf("Data Channel: cipher '%s'", plan.Cipher)) {
		t.Errorf("the tunnels of %s report no data channel cipher %s:\n%s", names[0], plan.Cipher, tail(tunnels[names[0]].Log(), 20))
	}
	t.Logf("canary: %d tunnel packets on the underlay, no marker, no TCP segment with data", tunnelled)

	// Every role's ports are bound to its tunnel address alone, and the sidecar's rule drops
	// a packet routed to a tunnel address from the underlay.
	ports := map[string][]int{
		"zk-0": {hbase.ZooKeeperPort}, "nn-0": {hbase.NameNodePort, hbase.NameNodeHTTPPort}, "dn-0": {hbase.DataNodePort, hbase.DataNodeIPCPort, hbase.DataNodeHTTPPort},
		"master-0": {hbase.MasterPort}, "rs-0": {hbase.RegionServerPort},
	}
	for i, name := range names {
		for _, port := range ports[name] {
			if outsider.Dial(hosts[i].Address, port, 2*time.Second) {
				t.Errorf("a host outside the tunnel reached %s's port %d at its underlay address", name, port)
			}
		}
	}
	rs, master := hosts[4], hosts[3]
	rsTunnel := netip.MustParseAddr(at["rs-0"])
	outsider.Run(t, "ip", "route", "add", vpn.Subnet.String(), "via", rs.Address.String())
	if outsider.Dial(rsTunnel, hbase.RegionServerPort, 2*time.Second) {
		t.Errorf("a host outside the tunnel reached the RegionServer at %s by routing to it over the underlay", rsTunnel)
	}
	if !master.Dial(rsTunnel, hbase.RegionServerPort, 5*time.Second) {
		t.Errorf("the Master's host cannot reach the RegionServer at %s through the tunnel", rsTunnel)
	}
	// The rule is what stops it: without it, the routed connection opens.
	rs.Run(t, "nft", "delete", "table", "inet", "secured_vpn")
	if !outsider.Dial(rsTunnel, hbase.RegionServerPort, 2*time.Second) {
		t.Error("without the sidecar's nftables rule the routed connection still fails: the check above proves nothing")
	}
}
