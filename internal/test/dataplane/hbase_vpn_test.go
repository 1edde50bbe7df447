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
	withHBase(t)
	testHBaseOverTunnel(t, hbaseProfile(t, "wireguard", &v1alpha1.EncryptionSettings{VPN: &v1alpha1.VPNSettings{Scope: v1alpha1.VPNScopeAll}}))
}

// hbaseUnderlay is a private underlay for an HBase cluster: a host per role (ZooKeeper, the
// NameNode, the DataNode, the Master, the RegionServer, in the tunnel plan's order), a client
// host and an outsider, and the tunnel the profile asks for.
type hbaseUnderlay struct {
	nw               *Network
	hosts            []*Host
	client, outsider *Host
	plan             vpn.Plan
	secret           TunnelFiles
}

func newHBaseUnderlay(t *testing.T, settings v1alpha1.VPNSettings) hbaseUnderlay {
	u := hbaseUnderlay{nw: NewNetwork(t)}
	var underlayNames []string
	for _, n := range hbaseMembers {
		h := u.nw.AddHost(t, n)
		u.hosts = append(u.hosts, h)
		underlayNames = append(underlayNames, h.Address.String())
	}
	u.client, u.outsider = u.nw.AddHost(t, "client"), u.nw.AddHost(t, "outsider")
	plan, err := vpn.NewPlan(settings, hbaseMembers, underlayNames)
	if err != nil {
		t.Fatal(err)
	}
	u.plan, u.secret = plan, TunnelSecret(t, plan)
	return u
}

var hbaseMembers = []string{"zk-0", "nn-0", "dn-0", "master-0", "rs-0"}

// startTunnels runs every member's sidecar script, the client's too, and returns them by member.
func (u hbaseUnderlay) startTunnels(t *testing.T) map[string]*process {
	start := time.Now()
	tunnels := map[string]*process{}
	for i, h := range u.hosts {
		tunnels[hbaseMembers[i]] = StartTunnel(t, h, u.plan, u.secret, hbaseMembers[i])
	}
	tunnels["client-0"] = StartTunnel(t, u.client, u.plan, u.secret, "client-0")
	t.Logf("tunnel up in %s: %s", time.Since(start).Round(time.Millisecond), firstLine(tunnels[hbaseMembers[0]].Log(), "tunnel: "))
	return tunnels
}

// named: the roles by their underlay addresses (false) or their tunnel addresses (true).
func (u hbaseUnderlay) named(tunnel bool) HBaseHosts {
	at := make([]string, len(u.hosts))
	for i, m := range u.plan.Nodes() {
		at[i] = u.hosts[i].Address.String()
		if tunnel {
			at[i] = m.Address.String()
		}
	}
	return HBaseHosts{ZooKeeper: at[0], NameNode: at[1], DataNode: at[2], Master: at[3], RegionServer: at[4]}
}

// on places each role's process on its host, by either of its addresses.
func (u hbaseUnderlay) on() map[string]*Host {
	on := map[string]*Host{}
	for i, m := range u.plan.Nodes() {
		on[m.Address.String()], on[u.hosts[i].Address.String()] = u.hosts[i], u.hosts[i]
	}
	return on
}

func testHBaseOverTunnel(t *testing.T, enc v1alpha1.EffectiveEncryption) {
	u := newHBaseUnderlay(t, *enc.VPN)
	start := time.Now()
	u.startTunnels(t)
	// Every role is known by its tunnel address, as the operator renders the pods' files.
	c := StartHBaseClusterInTunnel(t, enc, u.named(true), u.on(), u.client)
	t.Logf("HBase in the tunnel up in %s", time.Since(start).Round(time.Second))
	tunnelCanary(t, u, c, "tunnelled")

	// Every role's ports are bound to its tunnel address alone, and the sidecar's rule drops
	// a packet routed to a tunnel address from the underlay.
	ports := map[string][]int{
		"zk-0": {hbase.ZooKeeperPort}, "nn-0": {hbase.NameNodePort, hbase.NameNodeHTTPPort}, "dn-0": {hbase.DataNodePort, hbase.DataNodeIPCPort, hbase.DataNodeHTTPPort},
		"master-0": {hbase.MasterPort}, "rs-0": {hbase.RegionServerPort},
	}
	for i, name := range hbaseMembers {
		for _, port := range ports[name] {
			if u.outsider.Dial(u.hosts[i].Address, port, 2*time.Second) {
				t.Errorf("a host outside the tunnel reached %s's port %d at its underlay address", name, port)
			}
		}
	}
	rs, master := u.hosts[4], u.hosts[3]
	rsTunnel := netip.MustParseAddr(c.Hosts.RegionServer)
	u.outsider.Run(t, "ip", "route", "add", vpn.Subnet.String(), "via", rs.Address.String())
	if u.outsider.Dial(rsTunnel, hbase.RegionServerPort, 2*time.Second) {
		t.Errorf("a host outside the tunnel reached the RegionServer at %s by routing to it over the underlay", rsTunnel)
	}
	if !master.Dial(rsTunnel, hbase.RegionServerPort, 5*time.Second) {
		t.Errorf("the Master's host cannot reach the RegionServer at %s through the tunnel", rsTunnel)
	}
	// The rule is what stops it: without it, the routed connection opens.
	rs.Run(t, "nft", "delete", "table", "inet", "secured_vpn")
	if !u.outsider.Dial(rsTunnel, hbase.RegionServerPort, 2*time.Second) {
		t.Error("without the sidecar's nftables rule the routed connection still fails: the check above proves nothing")
	}
}

// tunnelCanary has the client create, put, get and scan a marker while tcpdump watches the
// underlay, which must carry nothing of it but tunnel packets.
func tunnelCanary(t *testing.T, u hbaseUnderlay, c *HBaseCluster, table string) {
	t.Helper()
	// The canary: everything the client and the roles exchange while the client writes and
	// reads a marker (HBase RPC, ZooKeeper, HDFS RPC and block transfer) is on the underlay,
	// and all of it must be tunnel packets.
	marker := Marker(t)
	capture := u.nw.Capture(t, "ip", func() {
		if err := c.Smoke(t, table, marker); err != nil {
			t.Fatalf("create, put, get, scan through the tunnel: %v", err)
		}
	})
	if bytes.Contains(capture, []byte(marker)) {
		t.Error("the marker is on the underlay in clear")
	}
	var tunnelled, tcp int
	for _, p := range Packets(capture) {
		switch {
		case p.Protocol == 17 && (tunnelPort(u.plan, p.SrcPort) || tunnelPort(u.plan, p.DstPort)):
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
	t.Logf("canary: %d tunnel packets on the underlay, no marker, no TCP segment with data", tunnelled)
}

// Switching the shipped OpenVPN profile's tunnel (AES-256-GCM, scope All: seed 001's VPN
// strategy) on and off under a running HBase: every server's name is its address, and
// a tunnel gives every server a new one, so every role restarts at once with the new names, as
// their pods do when the profile's vpn changes (hbase.Next takes it in one step). The servers'
// state survives the rename: HDFS knows its DataNode by its storage id, HBase splits the logs
// of the RegionServer it knew by its old name. The test measures the gap each way, reads back
// the rows written before, and checks the underlay while the tunnel is on.
func TestHBaseTunnelTurnsOnAndOffInOneStep(t *testing.T) {
	withHBase(t)
	plain := hbaseProfile(t, "", disabled)
	tunnelled := hbaseProfile(t, "openvpn", nil)
	for _, c := range []struct{ from, to v1alpha1.EffectiveEncryption }{{plain, tunnelled}, {tunnelled, plain}} {
		if next := hbase.Next(&c.from, c.to); !hbase.SameStep(next, c.to) {
			t.Fatalf("a tunnel must come and go in one step, got %s first", hbase.Describe(&c.from, next))
		}
	}
	u := newHBaseUnderlay(t, *tunnelled.VPN)
	c := StartHBaseClusterInTunnel(t, plain, u.named(false), u.on(), u.client)
	written := Marker(t)
	if err := c.Smoke(t, "before", written); err != nil {
		t.Fatalf("on the underlay: %v", err)
	}
	// The sidecars start with the roles' new pods; here they come up first, which changes
	// nothing for the processes, which all restart anyway.
	tunnels := u.startTunnels(t)
	all := []hbase.Role{hbase.RegionServer, hbase.Master, hbase.DataNode, hbase.NameNode, hbase.ZooKeeper}
	for _, move := range []struct {
		name    string
		tunnel  bool
		profile v1alpha1.EffectiveEncryption
	}{{"on", true, tunnelled}, {"off", false, plain}} {
		c.Move(u.named(move.tunnel))
		stopped, up := restartTogether(t, c, all, move.profile)
		c.ConfigureClient(t, move.profile)
		began := time.Now().Add(-up)
		if move.tunnel {
			tunnelCanary(t, u, c, "tunnelled")
			if log := tunnels[hbaseMembers[0]].Log(); !strings.Contains(log, fmt.Sprintf("Data Channel: cipher '%s'", u.plan.Cipher)) {
				t.Errorf("the tunnels of %s report no data channel cipher %s:\n%s", hbaseMembers[0], u.plan.Cipher, tail(log, 20))
			}
		} else if err := c.Smoke(t, "untunnelled", "v"); err != nil {
			t.Fatalf("on the underlay again: %v", err)
		}
		if err := c.ReadBack(t, "before", written); err != nil {
			t.Errorf("the rows written before the tunnel went %s: %v", move.name, err)
		}
		t.Logf("OpenVPN tunnel %s, in one step: %s stopped in %s, all serving again after %s, a client worked again after %s (its own JVM start included)",
			move.name, all, stopped.Round(100*time.Millisecond), up.Round(time.Second), time.Since(began).Round(time.Second))
	}
}
