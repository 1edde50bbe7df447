package cassandra

import (
	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/vpn"
)

// VPNAddressesFile is the tunnel's address table in the node's configuration: the launcher
// finds the node's own tunnel address in it by host name.
const VPNAddressesFile = "vpn-addresses"

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

// Tunnel is the VPN plan of a datastore running step: its nodes by pod name and stable host
// name; nil when the step has no VPN.
func Tunnel(ds *v1alpha1.SecuredDatastore, step Step, domain string) (*vpn.Plan, error) {
	settings := step.Encryption.VPN
	if !settings.Enabled() {
		return nil, nil
	}
	n := NamesOf(ds)
	var names, hosts []string
	for i := range int(Nodes(ds)) {
		names = append(names, n.Pod(i))
		hosts = append(hosts, n.PodHost(i, domain))
	}
	p, err := vpn.NewPlan(*settings, names, hosts)
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// Bound is the tunnel a step's nodes listen in: the step's tunnel, or nil while they stand by
// outside it (TunnelStandby), running its sidecar but staying on the pod's address.
func Bound(tunnel *vpn.Plan, step Step) *vpn.Plan {
	if step.TunnelStandby {
		return nil
	}
	return tunnel
}
