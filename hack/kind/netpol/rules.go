package main

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// table is the nftables table this enforcer owns on each node; nothing else writes it.
const table = "sdo-netpol"

// cluster is what the rules are computed from: the API's pods, namespaces and policies.
type cluster struct {
	pods       []corev1.Pod
	namespaces []corev1.Namespace
	policies   []networkingv1.NetworkPolicy
}

// guarded is a pod on this node that at least one ingress policy selects: only what its
// allows name may open a connection to it.
type guarded struct {
	pod    string // namespace/name, for the ruleset's comments
	ips    []netip.Addr
	allows []allow
}

// allow is one ingress rule resolved against the cluster: no sources means every source, no
// ports every port (the API's meaning of an empty from or ports).
type allow struct {
	sources []source
	ports   []portRange
}

type source struct {
	prefix netip.Prefix
	except []netip.Prefix
}

type portRange struct {
	proto    string // nft's name: tcp, udp or sctp
	from, to int32
}

// compile resolves every ingress policy against the pods on node. Egress rules are not
// enforced: neither the operator nor its chart writes one. Selectors the API server validated
// cannot fail to parse; if one does anyway, compile fails rather than leave its pods open.
func compile(node string, c cluster) ([]guarded, error) {
	nsLabels := map[string]labels.Set{}
	for _, ns := range c.namespaces {
		nsLabels[ns.Name] = ns.Labels
	}
	var out []guarded
	for i := range c.pods {
		dst := &c.pods[i]
		ips := podIPs(dst)
		if dst.Spec.NodeName != node || len(ips) == 0 {
			continue
		}
		g := guarded{pod: dst.Namespace + "/" + dst.Name, ips: ips}
		selected := false
		for j := range c.policies {
			p := &c.policies[j]
			if p.Namespace != dst.Namespace || !hasIngress(p) {
				continue
			}
			ok, err := matches(&p.Spec.PodSelector, dst.Labels)
			if err != nil {
				return nil, fmt.Errorf("NetworkPolicy %s/%s: spec.podSelector: %w", p.Namespace, p.Name, err)
			}
			if !ok {
				continue
			}
			selected = true
			for k, rule := range p.Spec.Ingress {
				a, err := resolve(rule, p.Namespace, dst, c.pods, nsLabels)
				if err != nil {
					return nil, fmt.Errorf("NetworkPolicy %s/%s: spec.ingress[%d]: %w", p.Namespace, p.Name, k, err)
				}
				if a != nil {
					g.allows = append(g.allows, *a)
				}
			}
		}
		if selected {
			out = append(out, g)
		}
	}
	return out, nil
}

// resolve turns one rule into the addresses and ports it admits to dst; nil when it admits
// nothing (peers that match no pod, or named ports dst does not have).
func resolve(rule networkingv1.NetworkPolicyIngressRule, ns string, dst *corev1.Pod, pods []corev1.Pod, nsLabels map[string]labels.Set) (*allow, error) {
	var a allow
	for _, p := range rule.Ports {
		if r, ok := portOf(p, dst); ok {
			a.ports = append(a.ports, r)
		}
	}
	if len(rule.Ports) > 0 && len(a.ports) == 0 {
		return nil, nil
	}
	for _, peer := range rule.From {
		if peer.IPBlock != nil {
			s, err := block(peer.IPBlock)
			if err != nil {
				return nil, err
			}
			a.sources = append(a.sources, s)
			continue
		}
		for i := range pods {
			src := &pods[i]
			in, err := peerMatches(peer, ns, src, nsLabels)
			if err != nil {
				return nil, err
			}
			if !in {
				continue
			}
			for _, ip := range podIPs(src) {
				a.sources = append(a.sources, source{prefix: netip.PrefixFrom(ip, ip.BitLen())})
			}
		}
	}
	if len(rule.From) > 0 && len(a.sources) == 0 {
		return nil, nil
	}
	return &a, nil
}

func peerMatches(peer networkingv1.NetworkPolicyPeer, ns string, src *corev1.Pod, nsLabels map[string]labels.Set) (bool, error) {
	if peer.NamespaceSelector == nil {
		if src.Namespace != ns {
			return false, nil
		}
	} else if ok, err := matches(peer.NamespaceSelector, nsLabels[src.Namespace]); err != nil || !ok {
		return false, err
	}
	if peer.PodSelector == nil {
		return true, nil
	}
	return matches(peer.PodSelector, src.Labels)
}

func portOf(p networkingv1.NetworkPolicyPort, dst *corev1.Pod) (portRange, bool) {
	proto := corev1.ProtocolTCP
	if p.Protocol != nil {
		proto = *p.Protocol
	}
	r := portRange{proto: strings.ToLower(string(proto)), from: 1, to: 65535}
	switch {
	case p.Port == nil:
	case p.Port.IntVal != 0:
		r.from, r.to = p.Port.IntVal, p.Port.IntVal
		if p.EndPort != nil {
			r.to = *p.EndPort
		}
	default: // a named port means the destination container's port of that name
		n, ok := namedPort(dst, p.Port.StrVal, proto)
		if !ok {
			return r, false
		}
		r.from, r.to = n, n
	}
	return r, true
}

func namedPort(pod *corev1.Pod, name string, proto corev1.Protocol) (int32, bool) {
	for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		for _, p := range c.Ports {
			pp := p.Protocol
			if pp == "" {
				pp = corev1.ProtocolTCP
			}
			if p.Name == name && pp == proto {
				return p.ContainerPort, true
			}
		}
	}
	return 0, false
}

func block(b *networkingv1.IPBlock) (source, error) {
	prefix, err := netip.ParsePrefix(b.CIDR)
	if err != nil {
		return source{}, fmt.Errorf("ipBlock.cidr: %w", err)
	}
	s := source{prefix: prefix.Masked()}
	for _, e := range b.Except {
		p, err := netip.ParsePrefix(e)
		if err != nil {
			return source{}, fmt.Errorf("ipBlock.except: %w", err)
		}
		s.except = append(s.except, p.Masked())
	}
	return s, nil
}

func hasIngress(p *networkingv1.NetworkPolicy) bool {
	// The API server fills policyTypes in; an empty list means Ingress all the same.
	return len(p.Spec.PolicyTypes) == 0 || slices.Contains(p.Spec.PolicyTypes, networkingv1.PolicyTypeIngress)
}

func matches(sel *metav1.LabelSelector, set labels.Set) (bool, error) {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false, err
	}
	return s.Matches(set), nil
}

// podIPs are the addresses a pod's traffic carries. Pods on the host network share the node's
// address and finished pods may have handed theirs on, so neither is a pod here: traffic from
// them is judged as traffic from an address that no pod selector names.
func podIPs(p *corev1.Pod) []netip.Addr {
	if p.Spec.HostNetwork || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return nil
	}
	var ips []netip.Addr
	for _, s := range p.Status.PodIPs {
		if ip, err := netip.ParseAddr(s.IP); err == nil {
			ips = append(ips, ip.Unmap())
		}
	}
	if len(ips) == 0 && p.Status.PodIP != "" {
		if ip, err := netip.ParseAddr(p.Status.PodIP); err == nil {
			ips = append(ips, ip.Unmap())
		}
	}
	return ips
}

// safeComment keeps a comment in the ruleset to the characters of Kubernetes names, so no
// object name can end the comment and add a rule.
var safeComment = regexp.MustCompile(`[^a-z0-9./-]`)

// render writes the nftables script that replaces this enforcer's table in one transaction.
// Connections already established stay up (as with every NetworkPolicy implementation); a new
// connection to a guarded pod is dropped unless an allow admits its source, protocol and port.
// Only addresses parsed by net/netip and integers reach the script.
func render(pods []guarded) string {
	var b strings.Builder
	// Declaring the table first makes the delete succeed when it does not exist yet.
	fmt.Fprintf(&b, "table inet %s {}\ndelete table inet %s\ntable inet %s {\n", table, table, table)
	b.WriteString("\tchain forward {\n\t\ttype filter hook forward priority filter; policy accept;\n")
	b.WriteString("\t\tct state established,related accept\n")
	for i, g := range pods {
		for _, ip := range g.ips {
			fmt.Fprintf(&b, "\t\t%s daddr %s jump pod%d\n", family(ip), ip, i)
		}
	}
	b.WriteString("\t}\n")
	for i, g := range pods {
		fmt.Fprintf(&b, "\t# %s\n\tchain pod%d {\n", safeComment.ReplaceAllString(g.pod, "_"), i)
		for _, a := range g.allows {
			for _, line := range allowLines(a) {
				fmt.Fprintf(&b, "\t\t%s accept\n", line)
			}
		}
		b.WriteString("\t\tdrop\n\t}\n")
	}
	b.WriteString("}\n")
	return b.String()
}

// allowLines are the matches of one allow, one line per address family and protocol.
func allowLines(a allow) []string {
	var srcs []string
	if len(a.sources) == 0 {
		srcs = []string{""}
	}
	byFamily := map[string][]source{}
	for _, s := range a.sources {
		f := family(s.prefix.Addr())
		byFamily[f] = append(byFamily[f], s)
	}
	for _, f := range []string{"ip", "ip6"} {
		var hosts []string
		for _, s := range byFamily[f] {
			switch {
			case len(s.except) > 0:
				srcs = append(srcs, fmt.Sprintf("%s saddr %s %s saddr != %s ", f, prefixString(s.prefix), f, set(prefixStrings(s.except))))
			case s.prefix.IsSingleIP():
				hosts = append(hosts, prefixString(s.prefix))
			default:
				// A block on its own line: in one set with pod addresses it could overlap
				// them, which nft refuses.
				srcs = append(srcs, fmt.Sprintf("%s saddr %s ", f, prefixString(s.prefix)))
			}
		}
		if len(hosts) > 0 {
			srcs = append(srcs, fmt.Sprintf("%s saddr %s ", f, set(hosts)))
		}
	}
	var ports []string
	if len(a.ports) == 0 {
		ports = []string{""}
	}
	single := map[string][]string{}
	for _, p := range a.ports {
		if p.to == p.from {
			single[p.proto] = append(single[p.proto], fmt.Sprint(p.from))
			continue
		}
		// Ranges on their own lines, for the same reason as blocks.
		ports = append(ports, fmt.Sprintf("%s dport %d-%d ", p.proto, p.from, p.to))
	}
	for _, proto := range sortedKeys(single) {
		ports = append(ports, fmt.Sprintf("%s dport %s ", proto, set(single[proto])))
	}
	var lines []string
	for _, s := range srcs {
		for _, p := range ports {
			lines = append(lines, strings.TrimSpace(s+p))
		}
	}
	return lines
}

func family(ip netip.Addr) string {
	if ip.Is4() {
		return "ip"
	}
	return "ip6"
}

// prefixString writes a host prefix as a bare address, which is how nft lists it back.
func prefixString(p netip.Prefix) string {
	if p.IsSingleIP() {
		return p.Addr().String()
	}
	return p.String()
}

func prefixStrings(ps []netip.Prefix) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = prefixString(p)
	}
	return out
}

// set writes one element bare and several as an anonymous set, sorted and without repeats.
func set(elems []string) string {
	elems = slices.Clone(elems)
	sort.Strings(elems)
	elems = slices.Compact(elems)
	if len(elems) == 1 {
		return elems[0]
	}
	return "{ " + strings.Join(elems, ", ") + " }"
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
