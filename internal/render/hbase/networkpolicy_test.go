package hbase

import (
	"slices"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
)

// Clients (by default, pods of the datastore's namespace) reach the Master, the RegionServers
// and (with Kerberos) the KDC; ZooKeeper, HDFS and the web UIs answer only the datastore's pods
// and the prober.
func TestNetworkPolicyClosesEverythingButTheClientPorts(t *testing.T) {
	ds, enc := sampleDatastore(t)
	c := clusterOf(ds, enc)
	c.OperatorNamespace = "secured-system"
	objs, err := Build(c)
	if err != nil {
		t.Fatal(err)
	}
	np := objs.NetworkPolicy
	open, peersOnly := map[int32]bool{}, map[int32]bool{}
	namespaceWide := func(p networkingv1.NetworkPolicyPeer) bool {
		return p.NamespaceSelector == nil && p.IPBlock == nil && p.PodSelector != nil && len(p.PodSelector.MatchLabels)+len(p.PodSelector.MatchExpressions) == 0
	}
	for _, rule := range np.Spec.Ingress {
		if len(rule.From) == 0 {
			t.Errorf("a rule admits every peer of the cluster: %+v", rule)
		}
		for _, p := range rule.Ports {
			if slices.ContainsFunc(rule.From, namespaceWide) {
				open[p.Port.IntVal] = true
			} else {
				peersOnly[p.Port.IntVal] = true
			}
		}
		if len(rule.From) > 0 && !slices.ContainsFunc(rule.From, func(p networkingv1.NetworkPolicyPeer) bool {
			return p.NamespaceSelector != nil && p.NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"] == "secured-system"
		}) {
			t.Errorf("the internal rule does not admit the operator's prober: %+v", rule.From)
		}
	}
	for _, p := range []int32{MasterPort, RegionServerPort, kdcPort} {
		if !open[p] {
			t.Errorf("client port %d is not open to clients", p)
		}
	}
	for _, p := range []int32{ZooKeeperPort, ZooKeeperPeerPort, ZooKeeperElectionPort, NameNodePort, NameNodeHTTPPort, NameNodeHTTPSPort,
		DataNodePort, DataNodeIPCPort, DataNodeHTTPPort, DataNodeHTTPSPort} {
		if open[p] || !peersOnly[p] {
			t.Errorf("port %d: open to every pod %v, to the datastore's pods %v; want only the latter", p, open[p], peersOnly[p])
		}
	}
	for _, ui := range []int32{16010, 16030} {
		if open[ui] || peersOnly[ui] {
			t.Errorf("web UI port %d is admitted", ui)
		}
	}
	if got := np.Spec.PodSelector.MatchLabels; got["app.kubernetes.io/instance"] != ds.Name || got["app.kubernetes.io/component"] != "" {
		t.Errorf("the policy selects %v; want every pod of the datastore", got)
	}
	// Without Kerberos there is no KDC to reach.
	for _, rule := range networkPolicy(ds, "secured-system", Roles, false, nil).Spec.Ingress {
		for _, p := range rule.Ports {
			if p.Port.IntVal == kdcPort {
				t.Errorf("the KDC port is admitted without Kerberos")
			}
		}
	}
}
