package cassandra

import (
	"secured.dev/operator/internal/render/vpn"
)

// VPNAddressesFile is the tunnel's address table in the node's configuration: the launcher
// finds the node's own tunnel address in it by host name.
const VPNAddressesFile = "vpn-addresses"

// VPNEnv tells the launcher where the address table is and which of Cassandra's addresses
// move into the tunnel.
func VPNEnv(p vpn.Plan, addresses string) []string {
	return []string{"VPN_ADDRESSES=" + addresses, "VPN_SCOPE=" + string(p.Scope)}
}

// TunnelSeeds are the seeds of a cluster whose internode traffic is in the tunnel: the first
// two nodes' tunnel addresses (one when the cluster has one), as Seeds does with host names.
func TunnelSeeds(p vpn.Plan) []string {
	nodes := p.Nodes()
	seeds := []string{nodes[0].Address.String()}
	if len(nodes) > 2 {
		seeds = append(seeds, nodes[1].Address.String())
	}
	return seeds
}
