package verify

import (
	"net"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/probe"
	"secured.dev/operator/internal/render/cassandra"
	"secured.dev/operator/internal/render/hbase"
	"secured.dev/operator/internal/status"
)

// Channel names in status.encryption.observed and in metrics.
const (
	ChannelClientToNode = "ClientToNode"
	ChannelNodeToNode   = "NodeToNode"
)

// Endpoint is one port of one pod to probe, and what it must accept.
type Endpoint struct {
	Pod, Channel, Address string
	Want                  v1alpha1.EffectiveChannel
	Options               probe.Options
	// Tunnelled: a VPN profile carries the channel, so the pod's own address must not answer.
	Tunnelled bool
	// Identity the endpoint's certificate must prove, when the datastore's trust is known.
	Identity *Identity
}

// CassandraEndpoints are the client and internode ports of every ready pod with an address.
func CassandraEndpoints(pods []corev1.Pod, enc v1alpha1.EffectiveEncryption, clientsTunnelled, nodesTunnelled bool) []Endpoint {
	var out []Endpoint
	for _, p := range probeable(pods) {
		out = append(out,
			Endpoint{Pod: p.Name, Channel: ChannelClientToNode, Address: hostPort(p, cassandra.NativePort),
				Want: enc.ClientToNode, Options: probe.CassandraClient, Tunnelled: clientsTunnelled},
			Endpoint{Pod: p.Name, Channel: ChannelNodeToNode, Address: hostPort(p, cassandra.StoragePort),
				Want: enc.NodeToNode, Options: probe.CassandraInternode, Tunnelled: nodesTunnelled})
	}
	return out
}

// HBaseEndpoints are the RPC ports of every ready Master and RegionServer (one port serves
// clients and peers alike) and ZooKeeper's client port, which follows the RPC ports' TLS (its
// clients are the Masters and RegionServers).
func HBaseEndpoints(pods []corev1.Pod, enc v1alpha1.EffectiveEncryption) []Endpoint {
	ports := map[string]struct {
		port int
		opts probe.Options
	}{
		string(hbase.Master): {hbase.MasterPort, probe.HBaseRPC}, string(hbase.RegionServer): {hbase.RegionServerPort, probe.HBaseRPC},
		string(hbase.ZooKeeper): {hbase.ZooKeeperPort, probe.ZooKeeperClient},
	}
	// An HBase tunnel carries every channel: nothing answers at the pod's own address.
	tunnelled := enc.VPN.Enabled()
	var out []Endpoint
	for _, p := range probeable(pods) {
		if port, ok := ports[p.Labels["app.kubernetes.io/component"]]; ok {
			out = append(out, Endpoint{Pod: p.Name, Channel: ChannelClientToNode, Address: hostPort(p, port.port),
				Want: enc.ClientToNode, Options: port.opts, Tunnelled: tunnelled})
		}
	}
	return out
}

func probeable(pods []corev1.Pod) []corev1.Pod {
	var out []corev1.Pod
	for _, p := range pods {
		if status.PodReady(&p) && p.Status.PodIP != "" {
			out = append(out, p)
		}
	}
	return out
}

func hostPort(p corev1.Pod, port int) string {
	return net.JoinHostPort(p.Status.PodIP, strconv.Itoa(port))
}

// ReloadRecheck is how often the wire is probed while an endpoint still serves a certificate
// other than the one cert-manager issued last. Nodes pick a renewed certificate up without a
// restart, but not at once (the kubelet refreshes a mounted Secret within about a minute, HBase
// polls its files every minute): probing again this soon shows the renewal on the wire within
// a minute or two rather than at the next periodic probe.
const ReloadRecheck = 30 * time.Second

// InconclusiveRecheck is how soon the wire is probed again after a verdict that decided
// nothing (an endpoint unreachable, or too busy to answer every question in time): a node that
// restarts or is starved of CPU answers a little later, and a study waits on the verdict.
const InconclusiveRecheck = 30 * time.Second

// Interval is how long the verdict verified (the EncryptionVerified condition, nil before the
// first) stands before the wire is probed again: the configured interval, or at most
// InconclusiveRecheck after a verdict that decided nothing or a failed one no later probe has
// confirmed yet (observed: the last probe of each endpoint).
func Interval(verified *metav1.Condition, observed []v1alpha1.ObservedChannel, configured time.Duration) time.Duration {
	if verified != nil && verified.Status == metav1.ConditionFalse &&
		(Inconclusive(verified.Reason) || !Confirmed(verified, observed)) {
		return min(configured, InconclusiveRecheck)
	}
	return configured
}

// Inconclusive reports whether a failed verdict's reason decides nothing about the profile: an
// endpoint unreachable, or too busy to answer every question in time.
func Inconclusive(reason string) bool {
	return reason == v1alpha1.ReasonUnreachable || reason == v1alpha1.ReasonProbeIncomplete
}

// Confirmed reports whether the failed verdict verified was seen again: every endpoint was
// probed after the verdict was first reached (the condition's last transition) and the wire
// still did not verify. A node caught between a crash and its restart can answer one probe as
// a server it is not (a 3+3 HBase whose Master crashed on its first start "accepted plaintext"
// on its TLS-only port in one probe, seconds after its restart, and a study gave up its
// native-TLS cell on that probe alone), so a study gives a cell up on a confirmed verdict only,
// while the datastore reports every verdict as it comes.
func Confirmed(verified *metav1.Condition, observed []v1alpha1.ObservedChannel) bool {
	if verified == nil || verified.Status != metav1.ConditionFalse || len(observed) == 0 {
		return false
	}
	for _, o := range observed {
		if !o.LastProbeTime.After(verified.LastTransitionTime.Time) {
			return false
		}
	}
	return true
}

// Due returns 0 when the endpoints must be probed now (never probed, a different set of
// endpoints, a container (re)started since the last probe, or the interval passed), else how
// long until the next probe: the periodic one, or sooner while an endpoint was last seen
// serving a certificate that expires at another time than issuedNotAfter (the current node
// certificate's; zero without one).
func Due(observed []v1alpha1.ObservedChannel, endpoints []Endpoint, pods []corev1.Pod, issuedNotAfter, now time.Time, interval time.Duration) time.Duration {
	if len(observed) == 0 || len(observed) != len(endpoints) {
		return 0
	}
	last := observed[0].LastProbeTime.Time
	for i, o := range observed {
		if o.Endpoint != endpoints[i].Address || o.Channel != endpoints[i].Channel {
			return 0
		}
		if o.LastProbeTime.Time.Before(last) {
			last = o.LastProbeTime.Time
		}
	}
	for _, p := range pods {
		for _, c := range p.Status.ContainerStatuses {
			if c.State.Running != nil && c.State.Running.StartedAt.After(last) {
				return 0
			}
		}
	}
	if !issuedNotAfter.IsZero() && slices.ContainsFunc(observed, func(o v1alpha1.ObservedChannel) bool {
		return o.Certificate != nil && !o.Certificate.NotAfter.Truncate(time.Second).Equal(issuedNotAfter.Truncate(time.Second))
	}) {
		interval = min(interval, ReloadRecheck)
	}
	return max(0, last.Add(interval).Sub(now))
}

// Observation is what status.encryption.observed records of one probe.
func Observation(e Endpoint, res probe.Result, err error, now metav1.Time) v1alpha1.ObservedChannel {
	o := v1alpha1.ObservedChannel{
		Channel: e.Channel, Endpoint: e.Address, LastProbeTime: now,
		Protocols: res.VersionNames(), CipherSuites: res.SuiteNames(),
		PlaintextAccepted: res.PlaintextAccepted, ClientAuthRequired: res.ClientAuthRequired,
	}
	if c := res.Certificate; c != nil {
		o.Certificate = &v1alpha1.ObservedCertificate{Subject: c.Subject, Issuer: c.Issuer, DNSNames: slices.Clone(c.DNSNames), NotAfter: metav1.NewTime(c.NotAfter), Serial: c.Serial}
		if e.Identity != nil {
			problem := e.Identity.Check(res.Chain, now.Time)
			trusted := problem == nil
			o.Certificate.Trusted = &trusted
			if problem != nil {
				o.Certificate.Problem = problem.Error()
			}
		}
	}
	if err != nil {
		o.Error = err.Error()
	}
	return o
}
