package main

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

const node = "worker"

func pod(ns, name, ip string, lbls map[string]string) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: lbls},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{
			Name: "main", Ports: []corev1.ContainerPort{{Name: "cql", ContainerPort: 9042}},
		}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}}},
	}
}

func namespace(name string, lbls map[string]string) corev1.Namespace {
	return corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbls}}
}

func policy(ns string, sel map[string]string, rules ...networkingv1.NetworkPolicyIngressRule) networkingv1.NetworkPolicy {
	return networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p"},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: sel},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress:     rules,
		},
	}
}

func tcpPort(p intstr.IntOrString) networkingv1.NetworkPolicyPort {
	tcp := corev1.ProtocolTCP
	return networkingv1.NetworkPolicyPort{Protocol: &tcp, Port: &p}
}

// The API's meaning of each part of a policy, as rules: which pods are guarded and which
// source lines their chains admit.
func TestCompileFollowsTheAPIsMeaning(t *testing.T) {
	db := map[string]string{"app": "db"}
	pods := []corev1.Pod{
		pod("shop", "db-0", "10.244.1.10", db),
		pod("shop", "web", "10.244.1.11", map[string]string{"app": "web"}),
		pod("ops", "backup", "10.244.2.12", map[string]string{"app": "backup"}),
		pod("ops", "other", "10.244.2.13", nil),
	}
	hostNet := pod("shop", "agent", "172.18.0.3", map[string]string{"app": "web"})
	hostNet.Spec.HostNetwork = true
	done := pod("shop", "job", "10.244.1.14", map[string]string{"app": "web"})
	done.Status.Phase = corev1.PodSucceeded
	elsewhere := pod("shop", "db-1", "10.244.3.10", db)
	elsewhere.Spec.NodeName = "other-node"
	pods = append(pods, hostNet, done, elsewhere)
	namespaces := []corev1.Namespace{namespace("shop", map[string]string{"team": "shop"}), namespace("ops", map[string]string{"team": "ops"})}
	web := networkingv1.NetworkPolicyPeer{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}
	opsBackup := networkingv1.NetworkPolicyPeer{
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "ops"}},
		PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "backup"}},
	}
	cases := []struct {
		name     string
		policies []networkingv1.NetworkPolicy
		want     []string // lines of db-0's chain, in order
	}{
		{"no policy leaves a pod open", nil, nil},
		{"a policy with no rules closes its pods", []networkingv1.NetworkPolicy{policy("shop", db)}, []string{"drop"}},
		{
			"a pod selector names running pods of the policy's namespace, not host-network or finished ones",
			[]networkingv1.NetworkPolicy{policy("shop", db, networkingv1.NetworkPolicyIngressRule{From: []networkingv1.NetworkPolicyPeer{web}})},
			[]string{"ip saddr 10.244.1.11 accept", "drop"},
		},
		{
			"namespace and pod selector in one peer: both must match",
			[]networkingv1.NetworkPolicy{policy("shop", db, networkingv1.NetworkPolicyIngressRule{From: []networkingv1.NetworkPolicyPeer{opsBackup}})},
			[]string{"ip saddr 10.244.2.12 accept", "drop"},
		},
		{
			"a namespace selector alone names every pod there",
			[]networkingv1.NetworkPolicy{policy("shop", db, networkingv1.NetworkPolicyIngressRule{From: []networkingv1.NetworkPolicyPeer{
				{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "ops"}}}}})},
			[]string{"ip saddr { 10.244.2.12, 10.244.2.13 } accept", "drop"},
		},
		{
			"ports: numbers, a named port of the destination, a range; sources: a block with exceptions",
			[]networkingv1.NetworkPolicy{policy("shop", db, networkingv1.NetworkPolicyIngressRule{
				Ports: []networkingv1.NetworkPolicyPort{
					tcpPort(intstr.FromInt32(7000)), tcpPort(intstr.FromString("cql")), tcpPort(intstr.FromString("nope")),
					{Port: ptr(intstr.FromInt32(8000)), EndPort: ptr(int32(8100))},
				},
				From: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "192.168.0.0/16", Except: []string{"192.168.7.0/24"}}}},
			})},
			[]string{
				"ip saddr 192.168.0.0/16 ip saddr != 192.168.7.0/24 tcp dport 8000-8100 accept",
				"ip saddr 192.168.0.0/16 ip saddr != 192.168.7.0/24 tcp dport { 7000, 9042 } accept",
				"drop",
			},
		},
		{
			"a rule whose only port the pod does not have admits nothing",
			[]networkingv1.NetworkPolicy{policy("shop", db, networkingv1.NetworkPolicyIngressRule{Ports: []networkingv1.NetworkPolicyPort{tcpPort(intstr.FromString("nope"))}})},
			[]string{"drop"},
		},
		{
			"an empty rule admits everyone; two policies add up",
			[]networkingv1.NetworkPolicy{
				policy("shop", db, networkingv1.NetworkPolicyIngressRule{Ports: []networkingv1.NetworkPolicyPort{tcpPort(intstr.FromInt32(9042))}}),
				policy("shop", nil, networkingv1.NetworkPolicyIngressRule{From: []networkingv1.NetworkPolicyPeer{web}}),
			},
			[]string{"tcp dport 9042 accept", "ip saddr 10.244.1.11 accept", "drop"},
		},
		{
			"a policy of another namespace or for egress only guards nothing here",
			[]networkingv1.NetworkPolicy{
				policy("ops", nil),
				{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "out"}, Spec: networkingv1.NetworkPolicySpec{
					PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}}},
			},
			nil,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, err := compile(node, cluster{pods: pods, namespaces: namespaces, policies: tc.policies})
			if err != nil {
				t.Fatal(err)
			}
			got := chainOf(t, render(g), "shop/db-0")
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("db-0's chain:\n%s\nwant:\n%s\nruleset:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"), render(g))
			}
			for _, p := range g {
				if p.pod == "shop/db-1" {
					t.Error("a pod on another node got rules on this one")
				}
			}
		})
	}
}

// A selector the API would refuse fails the whole computation, so the rules in place stay
// rather than the pods it guards being opened.
func TestAnUnreadableSelectorChangesNothing(t *testing.T) {
	bad := policy("shop", nil)
	bad.Spec.PodSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near"}}
	_, err := compile(node, cluster{pods: []corev1.Pod{pod("shop", "db-0", "10.244.1.10", nil)}, policies: []networkingv1.NetworkPolicy{bad}})
	if err == nil || !strings.Contains(err.Error(), "shop/p: spec.podSelector") {
		t.Fatalf("err = %v, want one naming the policy and its field", err)
	}
}

// chainOf returns the rule lines of a pod's chain in a rendered ruleset, nil when the pod has
// none.
func chainOf(t *testing.T, script, pod string) []string {
	t.Helper()
	lines := strings.Split(script, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != "# "+pod {
			continue
		}
		var out []string
		for _, r := range lines[i+2:] {
			if strings.TrimSpace(r) == "}" {
				return out
			}
			out = append(out, strings.TrimSpace(r))
		}
	}
	return nil
}

func ptr[T any](v T) *T { return &v }
