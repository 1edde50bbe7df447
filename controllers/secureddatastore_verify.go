package controllers

import (
	"context"
	"fmt"
	"net"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/probe"
	"secured.dev/operator/internal/render/cassandra"
	"secured.dev/operator/internal/render/hbase"
	"secured.dev/operator/internal/verify"
)

// Prober scans one endpoint; the real one is probe.Scan.
type Prober interface {
	Scan(ctx context.Context, address string, opts probe.Options) (probe.Result, error)
}

type scanFunc func(context.Context, string, probe.Options) (probe.Result, error)

func (f scanFunc) Scan(ctx context.Context, address string, opts probe.Options) (probe.Result, error) {
	return f(ctx, address, opts)
}

// DefaultVerificationInterval between probes of a datastore whose pods did not change.
const DefaultVerificationInterval = 5 * time.Minute

// Channel names in status.encryption.observed and in metrics.
const (
	channelClientToNode = "ClientToNode"
	channelNodeToNode   = "NodeToNode"
)

// endpoint is one port of one pod to probe.
type endpoint struct {
	pod, channel, address string
	want                  v1alpha1.EffectiveChannel
	opts                  probe.Options
	// tunnelled: a VPN profile carries the channel; the pod's address must not answer.
	tunnelled bool
}

// verifyWire probes every ready pod's client and internode ports once the effective profile has
// rolled out, again whenever a pod restarts, and otherwise every verification interval; it
// records what the wire accepts and whether that is exactly the effective profile.
func (r *SecuredDatastoreReconciler) verifyWire(ctx context.Context, s *datastoreScope) (ctrl.Result, error) {
	ds := s.ds
	converged := hbaseConverged(s)
	if ds.Spec.Engine == v1alpha1.EngineCassandra {
		converged = s.sts != nil && rolledOut(s.sts) && reflect.DeepEqual(s.step, cassandra.Target(s.resolution.Effective))
	}
	if !converged {
		setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionEncryptionVerified, metav1.ConditionUnknown, "Pending",
			"the wire is probed once every node runs the effective profile")
		return ctrl.Result{}, nil
	}
	endpoints := r.endpoints(s)
	if len(endpoints) == 0 {
		setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionEncryptionVerified, metav1.ConditionUnknown, "NoEndpoints",
			"no node is ready to be probed")
		return ctrl.Result{}, nil
	}
	interval := DefaultVerificationInterval
	if v := ds.Spec.Verification; v != nil && v.Interval != nil {
		interval = v.Interval.Duration
	}
	if wait := probeDue(ensureEncryptionStatus(ds).Observed, endpoints, s.pods, interval, time.Now()); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}

	prober := r.Prober
	if prober == nil {
		prober = scanFunc(probe.Scan)
	}
	now := metav1.Now()
	var observed []v1alpha1.ObservedChannel
	var problems []string
	worst := verify.ReasonVerified
	failing := map[string]bool{}
	for _, e := range endpoints {
		res, err := prober.Scan(ctx, e.address, e.opts)
		probeDuration.WithLabelValues(e.channel).Observe(res.Duration.Seconds())
		observed = append(observed, observation(e, res, err, now))
		f := verify.Compare(e.want, res, err)
		if e.tunnelled {
			f = verify.Tunnelled(res, err)
		}
		if f.Verified {
			continue
		}
		failing[e.channel] = true
		worst = verify.MoreSevere(worst, f.Reason)
		problems = append(problems, fmt.Sprintf("%s %s (%s): %s", e.pod, e.channel, e.address, strings.Join(f.Differences, "; ")))
	}
	ensureEncryptionStatus(ds).Observed = observed
	for _, ch := range []string{channelClientToNode, channelNodeToNode} {
		v := 1.0
		if failing[ch] {
			v = 0
		}
		encryptionVerified.WithLabelValues(ds.Namespace, ds.Name, ch).Set(v)
	}

	if len(problems) == 0 {
		msg := fmt.Sprintf("%d endpoints accept exactly the effective profile", len(endpoints))
		if setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionEncryptionVerified, metav1.ConditionTrue, verify.ReasonVerified, msg) {
			r.Recorder.Eventf(ds, nil, corev1.EventTypeNormal, verify.ReasonVerified, "ProbeWire", "%s", msg)
		}
	} else {
		msg := strings.Join(problems, "; ")
		if setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionEncryptionVerified, metav1.ConditionFalse, worst, msg) {
			r.Recorder.Eventf(ds, nil, corev1.EventTypeWarning, worst, "ProbeWire", "%s", msg)
		}
	}
	return ctrl.Result{RequeueAfter: interval}, nil
}

// endpoints lists the client and internode ports of every ready pod with an address; for
// HBase, the one RPC port of every Master and RegionServer, which serves both channels.
func (r *SecuredDatastoreReconciler) endpoints(s *datastoreScope) []endpoint {
	enc := s.resolution.Effective
	// s.tunnel is set by reconcileTunnel when the step has a VPN.
	clientsTunnelled := s.tunnel != nil && s.tunnel.CarriesClients()
	nodesTunnelled := s.tunnel != nil && s.tunnel.CarriesNodes()
	var out []endpoint
	for _, p := range s.pods {
		if !podReady(&p) || p.Status.PodIP == "" {
			continue
		}
		if s.ds.Spec.Engine == v1alpha1.EngineHBase {
			port, ok := map[string]int{string(hbase.Master): hbase.MasterPort, string(hbase.RegionServer): hbase.RegionServerPort}[p.Labels["app.kubernetes.io/component"]]
			if ok {
				out = append(out, endpoint{pod: p.Name, channel: channelClientToNode, address: net.JoinHostPort(p.Status.PodIP, strconv.Itoa(port)),
					want: enc.ClientToNode, opts: probe.HBaseRPC})
			}
			continue
		}
		out = append(out,
			endpoint{pod: p.Name, channel: channelClientToNode, address: net.JoinHostPort(p.Status.PodIP, strconv.Itoa(cassandra.NativePort)),
				want: enc.ClientToNode, opts: probe.CassandraClient, tunnelled: clientsTunnelled},
			endpoint{pod: p.Name, channel: channelNodeToNode, address: net.JoinHostPort(p.Status.PodIP, strconv.Itoa(cassandra.StoragePort)),
				want: enc.NodeToNode, opts: probe.CassandraInternode, tunnelled: nodesTunnelled})
	}
	return out
}

// probeDue returns 0 when the endpoints must be probed now (never probed, a different set of
// endpoints, a pod (re)started since the last probe, or the interval passed), else how long
// until the next periodic probe.
func probeDue(observed []v1alpha1.ObservedChannel, endpoints []endpoint, pods []corev1.Pod, interval time.Duration, now time.Time) time.Duration {
	if len(observed) == 0 || len(observed) != len(endpoints) {
		return 0
	}
	last := observed[0].LastProbeTime.Time
	for i, o := range observed {
		if o.Endpoint != endpoints[i].address || o.Channel != endpoints[i].channel {
			return 0
		}
		if o.LastProbeTime.Before(&metav1.Time{Time: last}) {
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
	return max(0, last.Add(interval).Sub(now))
}

func observation(e endpoint, res probe.Result, err error, now metav1.Time) v1alpha1.ObservedChannel {
	o := v1alpha1.ObservedChannel{
		Channel: e.channel, Endpoint: e.address, LastProbeTime: now,
		Protocols: res.VersionNames(), CipherSuites: res.SuiteNames(),
		PlaintextAccepted: res.PlaintextAccepted, ClientAuthRequired: res.ClientAuthRequired,
	}
	if c := res.Certificate; c != nil {
		o.Certificate = &v1alpha1.ObservedCertificate{Subject: c.Subject, Issuer: c.Issuer, DNSNames: slices.Clone(c.DNSNames), NotAfter: metav1.NewTime(c.NotAfter), Serial: c.Serial}
	}
	if err != nil {
		o.Error = err.Error()
	}
	return o
}
