package controllers

import (
	"context"
	"crypto/x509"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/probe"
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

// verifyWire probes every ready pod's client and internode ports once the effective profile has
// rolled out, again whenever a pod restarts, soon again while a renewed certificate is not
// served yet, and otherwise every verification interval; it records what the wire accepts and whether that is exactly the effective profile.
func (r *SecuredDatastoreReconciler) verifyWire(ctx context.Context, s *datastoreScope) (ctrl.Result, error) {
	ds := s.ds
	if !s.engine.converged() {
		setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionEncryptionVerified, metav1.ConditionUnknown, v1alpha1.ReasonProbePending,
			"the wire is probed once every node runs the effective profile")
		return ctrl.Result{}, nil
	}
	endpoints := s.engine.endpoints(s)
	if len(endpoints) == 0 {
		setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionEncryptionVerified, metav1.ConditionUnknown, v1alpha1.ReasonNoEndpoints,
			"no node is ready to be probed")
		return ctrl.Result{}, nil
	}
	interval := DefaultVerificationInterval
	if v := ds.Spec.Verification; v != nil && v.Interval != nil {
		interval = v.Interval.Duration
	}
	verdict := func() *metav1.Condition {
		return meta.FindStatusCondition(ds.Status.Conditions, v1alpha1.ConditionEncryptionVerified)
	}
	var issued time.Time
	if c := ds.Status.Certificates; c != nil && c.NotAfter != nil {
		issued = c.NotAfter.Time
	}
	seen := ensureEncryptionStatus(ds).Observed
	if wait := verify.Due(seen, endpoints, s.pods, issued, time.Now(), verify.Interval(verdict(), seen, interval)); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}

	batch := r.pool().collect(ds, endpoints)
	if batch == nil {
		// Under way in the probe pool, which wakes this datastore when it is done; the requeue
		// is a safety net only.
		if c := verdict(); c == nil || c.Status == metav1.ConditionUnknown {
			setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionEncryptionVerified, metav1.ConditionUnknown, v1alpha1.ReasonProbePending,
				fmt.Sprintf("probing %d endpoints", len(endpoints)))
		}
		return ctrl.Result{RequeueAfter: r.pool().deadline + 10*time.Second}, nil
	}
	var observed []v1alpha1.ObservedChannel
	var problems []string
	worst := v1alpha1.ReasonVerified
	failing := map[string]bool{}
	for i, e := range endpoints {
		res, err := batch.results[i].res, batch.results[i].err
		observed = append(observed, verify.Observation(e, res, err, batch.at))
		f := verify.WithIdentity(verify.Compare(e.Want, res, err), e.Want, e.Identity, res, err, batch.at.Time)
		if e.Tunnelled {
			f = verify.Tunnelled(res, err)
		}
		if f.Verified {
			continue
		}
		failing[e.Channel] = true
		worst = verify.MoreSevere(worst, f.Reason)
		problems = append(problems, fmt.Sprintf("%s %s (%s): %s", e.Pod, e.Channel, e.Address, strings.Join(f.Differences, "; ")))
	}
	ensureEncryptionStatus(ds).Observed = observed
	for _, ch := range []string{verify.ChannelClientToNode, verify.ChannelNodeToNode} {
		v := 1.0
		if failing[ch] {
			v = 0
		}
		encryptionVerified.WithLabelValues(ds.Namespace, ds.Name, ch).Set(v)
	}

	if len(problems) == 0 {
		msg := fmt.Sprintf("%d endpoints accept exactly the effective profile", len(endpoints))
		if setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionEncryptionVerified, metav1.ConditionTrue, v1alpha1.ReasonVerified, msg) {
			r.Recorder.Eventf(ds, nil, corev1.EventTypeNormal, v1alpha1.ReasonVerified, "ProbeWire", "%s", msg)
		}
	} else {
		msg := strings.Join(problems, "; ")
		if setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionEncryptionVerified, metav1.ConditionFalse, worst, msg) {
			r.Recorder.Eventf(ds, nil, corev1.EventTypeWarning, worst, "ProbeWire", "%s", msg)
		}
	}
	return ctrl.Result{RequeueAfter: verify.Interval(verdict(), observed, interval)}, nil
}

// withIdentities asks every endpoint to prove it is its pod, host(pod) by name, with a
// certificate from the trust bundle (PEM); without a bundle there is nothing to check against.
func withIdentities(trust []byte, eps []verify.Endpoint, host func(pod string) string) []verify.Endpoint {
	roots := x509.NewCertPool()
	if len(trust) == 0 || !roots.AppendCertsFromPEM(trust) {
		return eps
	}
	for i := range eps {
		eps[i].Identity = &verify.Identity{Roots: roots, DNSName: host(eps[i].Pod)}
	}
	return eps
}
