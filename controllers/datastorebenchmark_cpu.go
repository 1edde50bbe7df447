package controllers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/benchrun"
	"secured.dev/operator/internal/cpuacct"
)

// CPUAccountant reads the CPU that containers and nodes spent in a window; cpuacct.Prometheus
// reads it from the kubelets' counters.
type CPUAccountant interface {
	Account(ctx context.Context, req cpuacct.Request) (cpuacct.Result, error)
}

// DefaultCPUSettle suits a Prometheus that scrapes the kubelets every 15s.
const DefaultCPUSettle = 20 * time.Second

const (
	// cpuLate is how much longer than the settle a run waits for the samples that prove its
	// window complete (cpuacct.Request.Complete) before it takes what Prometheus has: a kubelet
	// that stopped reporting must not hold a study forever.
	cpuLate = 30 * time.Second
	// cpuRetry is how often a run looks again for them: Kind's kubelets refresh every 2s.
	cpuRetry = 2 * time.Second
)

// cpuSettling is how long a finished run must still wait before its CPU can be read: the
// kubelet sample taken just before the window closed reaches Prometheus only at its next
// scrape. Zero without accounting, or when there is nothing to account.
func (r *DatastoreBenchmarkReconciler) cpuSettling(s *benchmarkScope, out *benchrun.Outcome) time.Duration {
	if r.Options.CPUAccounting == nil || s.target.ServerPods() == nil || out.Summary.End.IsZero() {
		return 0
	}
	return max(0, time.Until(out.Summary.End.Add(r.Options.CPUSettle)))
}

// accountCPU reads what the datastore, its sidecars and everything else on their nodes spent
// during a succeeded run's measured window. Whatever prevents it becomes the reason in the
// result, never an error of the benchmark: throughput and latency stand on their own. again
// is set, and the result nil, while Prometheus may still be missing samples inside the
// window: a kubelet stamps a sample when it reads the counter and Prometheus stores it at its
// next scrape, which on a busy 2-core node came later than the settle (in one make demo study
// a run's samples covered 3s of its 10s window when it was accounted, although Prometheus
// held samples 2 to 4s apart over the whole window later on).
func (r *DatastoreBenchmarkReconciler) accountCPU(ctx context.Context, s *benchmarkScope, out *benchrun.Outcome) (cpu *v1alpha1.RunCPU, again time.Duration) {
	unavailable := func(format string, args ...any) (*v1alpha1.RunCPU, time.Duration) {
		return &v1alpha1.RunCPU{Unavailable: fmt.Sprintf(format, args...)}, 0
	}
	if s.b.Spec.Workload.Storage != nil {
		return unavailable("a storage workload measures the volume, not the datastore: fio's own CPU is the run's clientCPUMillis (the kernel's writeback and decryption workers are not in it)")
	}
	req, why := r.serverRequest(ctx, s, cpuacct.Window{Start: out.Summary.Start, End: out.Summary.End}, out.Clients)
	if why != "" {
		return unavailable("%s", why)
	}
	req.ClientCPU = out.Summary.ClientCPUSeconds
	req.Complete = time.Since(out.Summary.End) < r.Options.CPUSettle+cpuLate
	if len(out.Clients) == 1 {
		// One client's series places its operations in time; several pods' merged series
		// only approximately (their starts differ by a second or so).
		req.OperationsBetween = out.Summary.OperationsBetween
	}
	res, err := r.Options.CPUAccounting.Account(ctx, req)
	if req.Complete && errors.Is(err, cpuacct.ErrNotScraped) {
		return nil, cpuRetry
	}
	if err != nil {
		ctrl.LoggerFrom(ctx).Info("no CPU accounting for the run", "reason", err.Error())
		return unavailable("%v", err)
	}
	cpu = &v1alpha1.RunCPU{
		ServerMillis: millis(res.Server), SidecarMillis: millis(res.Sidecars), BackgroundMillis: millis(res.Background),
		BackgroundUnavailable: res.BackgroundUnmeasured, CoveredSeconds: int32(res.Span.Seconds()),
	}
	switch ops := out.Summary.Operations; {
	case res.ServerPerOperation > 0:
		cpu.ServerMicrosPerOp = strconv.FormatFloat(res.ServerPerOperation*1e6, 'f', 2, 64)
	case ops > 0:
		cpu.ServerMicrosPerOp = strconv.FormatFloat(res.Server*1e6/float64(ops), 'f', 2, 64)
	}
	return cpu, 0
}

// serverRequest asks for the datastore's containers and the nodes they run on (and those of
// clientNodes, pod to node) over w; why says what prevents it.
func (r *DatastoreBenchmarkReconciler) serverRequest(ctx context.Context, s *benchmarkScope, w cpuacct.Window, clientNodes map[string]string) (req cpuacct.Request, why string) {
	selector := s.target.ServerPods()
	switch {
	case r.Options.CPUAccounting == nil:
		return req, "the operator reads no CPU accounting: give it a Prometheus that scrapes the kubelets (--cpu-accounting-prometheus-url)"
	case selector == nil:
		return req, "an external target's servers are not in this cluster"
	}
	var pods corev1.PodList
	if err := r.Client.List(ctx, &pods, client.InNamespace(s.b.Namespace), client.MatchingLabels(selector)); err != nil {
		return req, fmt.Sprintf("listing the datastore's pods: %v", err)
	}
	req = cpuacct.Request{Window: w, Namespace: s.b.Namespace, Servers: map[string]string{}}
	nodes := map[string]bool{}
	for _, p := range pods.Items {
		if len(p.Spec.Containers) == 0 || p.Spec.NodeName == "" {
			continue
		}
		// The first container is the datastore's process in every pod the operator renders.
		req.Servers[p.Name] = p.Spec.Containers[0].Name
		nodes[p.Spec.NodeName] = true
	}
	for _, node := range clientNodes {
		if node != "" {
			nodes[node] = true
		}
	}
	for n := range nodes {
		req.Nodes = append(req.Nodes, n)
	}
	slices.Sort(req.Nodes)
	return req, ""
}

func millis(seconds float64) int64 { return int64(seconds*1000 + 0.5) }
