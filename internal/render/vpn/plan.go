// Package vpn renders the tunnels a VPN profile puts around datastore traffic: who is in the
// tunnel and at which address, the WireGuard and OpenVPN configuration of each member, and the
// sidecar that runs them. Pure functions: a plan and keys in, files and containers out. Keys
// are generated in keys.go and kept by the controller in a Secret.
package vpn

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strings"

	"secured.dev/operator/api/v1alpha1"
)

// Tunnel addressing and ports. The subnet is the shared address space of RFC 6598, which pod
// and service networks rarely use; every pod has its own network namespace, so two datastores
// may use the same addresses without meeting.
var Subnet = netip.MustParsePrefix("100.80.0.0/16")

const (
	// Interface is the WireGuard device; OpenVPN's point-to-point devices are InterfacePrefix
	// followed by the peer's index.
	Interface       = "vpn0"
	InterfacePrefix = "vpn"
	WireGuardPort   = 51820
	// OpenVPNBasePort + the index of the member that listens is the UDP port of each pair.
	OpenVPNBasePort = 1194
	// ClientSlots is how many clients (benchmark pods, applications' sidecars) may join a
	// tunnel whose scope includes client traffic.
	ClientSlots = 4
	// clientOffset: clients' addresses start at 100.80.255.1, far from the nodes'.
	clientOffset = 0xff00
)

// Member is one end of the tunnel: a datastore node or a client slot.
type Member struct {
	// Name identifies the member: the pod name of a node (its HOSTNAME), client-N for clients.
	Name string
	// Address in the tunnel.
	Address netip.Addr
	// Host peers dial on the underlay (a pod's stable DNS name); empty for clients, which
	// always dial and are never dialled.
	Host string
}

// Plan is a datastore's tunnel: its type, scope and members. Nodes come first, in ordinal
// order, then the client slots.
type Plan struct {
	Type    v1alpha1.VPNType
	Scope   v1alpha1.VPNScope
	Cipher  string // OpenVPN's data channel cipher
	Members []Member
}

// NewPlan lays out the tunnel of nodes whose underlay host names are hosts (ordinal order),
// with client slots when the scope includes client traffic.
func NewPlan(settings v1alpha1.VPNSettings, nodeNames, hosts []string) (Plan, error) {
	if len(nodeNames) != len(hosts) {
		return Plan{}, fmt.Errorf("%d node names for %d hosts", len(nodeNames), len(hosts))
	}
	if len(nodeNames) >= clientOffset-1 {
		return Plan{}, fmt.Errorf("%d nodes do not fit in the tunnel subnet %s", len(nodeNames), Subnet)
	}
	p := Plan{Type: settings.Type, Scope: settings.Scope}
	if p.Scope == "" {
		p.Scope = v1alpha1.VPNScopeNodeToNode
	}
	if p.Type == v1alpha1.VPNOpenVPN {
		p.Cipher = "AES-256-GCM"
		if settings.OpenVPN != nil && settings.OpenVPN.Cipher != "" {
			p.Cipher = settings.OpenVPN.Cipher
		}
	}
	for i, name := range nodeNames {
		p.Members = append(p.Members, Member{Name: name, Address: address(1 + i), Host: hosts[i]})
	}
	if p.CarriesClients() {
		for j := range ClientSlots {
			p.Members = append(p.Members, Member{Name: fmt.Sprintf("client-%d", j), Address: address(clientOffset + 1 + j)})
		}
	}
	return p, nil
}

func address(offset int) netip.Addr {
	b := Subnet.Addr().As4()
	v := binary.BigEndian.Uint32(b[:]) + uint32(offset)
	binary.BigEndian.PutUint32(b[:], v)
	return netip.AddrFrom4(b)
}

// CarriesNodes reports whether internode traffic goes through the tunnel.
func (p Plan) CarriesNodes() bool { return p.Scope != v1alpha1.VPNScopeClientToNode }

// CarriesClients reports whether client traffic goes through the tunnel.
func (p Plan) CarriesClients() bool { return p.Scope != v1alpha1.VPNScopeNodeToNode }

// Nodes are the members that run the datastore.
func (p Plan) Nodes() []Member {
	var out []Member
	for _, m := range p.Members {
		if m.Host != "" {
			out = append(out, m)
		}
	}
	return out
}

// Addresses is the file the datastore's launcher reads to find its own tunnel address by its
// host name: "name address" per line.
func (p Plan) Addresses() []byte {
	var b strings.Builder
	for _, m := range p.Members {
		fmt.Fprintf(&b, "%s %s\n", m.Name, m.Address)
	}
	return []byte(b.String())
}
