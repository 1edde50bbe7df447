package hbase

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/vpn"
)

// Tunnel is the VPN plan of a datastore whose profile has one: every pod of every role, in
// start order, and the client slots (an HBase tunnel always carries its clients: they reach
// every server at the address it registers). The KDC stays outside: Kerberos protects its own
// exchanges, and the pods reach it before their tunnel needs a ticket. Nil without a VPN.
func Tunnel(ds *v1alpha1.SecuredDatastore, enc v1alpha1.EffectiveEncryption, domain string) (*vpn.Plan, error) {
	settings := enc.VPN
	if !settings.Enabled() {
		return nil, nil
	}
	if settings.Scope != v1alpha1.VPNScopeAll {
		return nil, fmt.Errorf("an HBase tunnel must carry its clients (scope All), not %s", settings.Scope)
	}
	n := NamesOf(ds)
	var names, hosts []string
	for _, r := range Roles {
		for i := range int(Replicas(ds, r)) {
			names = append(names, fmt.Sprintf("%s-%d", n.StatefulSet(r), i))
			hosts = append(hosts, n.PodHost(r, i, domain))
		}
	}
	p, err := vpn.NewPlan(*settings, names, hosts)
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// InTunnel is the topology with every server named by its tunnel address: the addresses the
// servers bind and register, so that every call between them, and every client's, goes
// through the tunnel. Principals and certificates then name those addresses too.
func (c Topology) InTunnel(p vpn.Plan) Topology {
	address := map[string]string{}
	for _, m := range p.Nodes() {
		address[m.Host] = m.Address.String()
	}
	in := func(host string) string {
		if a, ok := address[host]; ok {
			return a
		}
		return host
	}
	out := c
	out.ZooKeeper = nil
	for _, h := range c.ZooKeeper {
		out.ZooKeeper = append(out.ZooKeeper, in(h))
	}
	out.NameNode = in(c.NameNode)
	out.Bootstrap = nil
	for _, b := range c.Bootstrap {
		host, port, _ := strings.Cut(b, ":")
		out.Bootstrap = append(out.Bootstrap, in(host)+":"+port)
	}
	return out
}

// tunnelAddressesDir is where a tunnelled role's container finds the tunnel's address table
// (the public tunnel Secret, which holds no private key).
const tunnelAddressesDir = "/etc/vpn"

// tunnelStart is the shell a tunnelled role's command starts with: the pod's tunnel address,
// found by its name in the address table, becomes both the name peers reach it by and the
// address it binds. A pod missing from the table fails to start rather than bind elsewhere.
const tunnelStart = `export ` + HostEnv + `="$(awk -v n="$POD_NAME" '$1 == n { print $2 }' ` + tunnelAddressesDir + `/addresses)" && ` +
	`[ -n "$` + HostEnv + `" ] && export ` + BindEnv + `="$` + HostEnv + `" && `

// tunnelPortProbe checks a port bound to the pod's tunnel address from inside the pod: the
// kubelet's TCP probes dial the pod's own address, where nothing listens.
func tunnelPortProbe(port int32) corev1.ProbeHandler {
	script := fmt.Sprintf(`a="$(awk -v n="$POD_NAME" '$1 == n { print $2 }' %s/addresses)" && exec 3<>"/dev/tcp/$a/%d"`, tunnelAddressesDir, port)
	return corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"bash", "-c", script}}}
}
