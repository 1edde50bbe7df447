package controllers

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/benchresult"
	"secured.dev/operator/internal/render/benchmark"
)

func TestBenchmarkAndStudyReportMissingReferences(t *testing.T) {
	g := NewWithT(t)
	b := &v1alpha1.DatastoreBenchmark{
		ObjectMeta: metav1.ObjectMeta{Name: "missing-target", Namespace: "default"},
		Spec: v1alpha1.DatastoreBenchmarkSpec{
			Target:   v1alpha1.BenchmarkTarget{DatastoreRef: &v1alpha1.SecuredDatastoreReference{Name: "nope"}},
			Workload: v1alpha1.Workload{Preset: "A"},
			Load:     v1alpha1.Load{Mode: v1alpha1.LoadMaxThroughput},
		},
	}
	create(t, b)
	s := closedLoopStudy("missing-profiles", "st-test-plain", "st-test-tls")
	create(t, s)
	g.Eventually(func(g Gomega) {
		c := condition(get(g, b).Status.Conditions, v1alpha1.ConditionReady)
		g.Expect(c.Reason).To(Equal("TargetNotFound"))
		g.Expect(c.Message).To(ContainSubstring("spec.target.datastoreRef.name"))
		c = condition(get(g, s).Status.Conditions, v1alpha1.ConditionReady)
		g.Expect(c.Reason).To(Equal(v1alpha1.ReasonProfileNotFound))
		g.Expect(c.Message).To(ContainSubstring("st-test-plain, st-test-tls"))
	}).Should(Succeed())

	// Creating the profiles lets the study plan, through the profile watch.
	create(t, tls13Profile("st-test-plain"))
	create(t, tls13Profile("st-test-tls"))
	g.Eventually(func(g Gomega) {
		st := get(g, s)
		g.Expect(condition(st.Status.Conditions, v1alpha1.ConditionReady).Reason).To(Equal("Planned"))
		g.Expect(st.Status.Cells).To(HaveLen(2))
		g.Expect(condition(st.Status.Conditions, v1alpha1.ConditionProgressing).Message).To(ContainSubstring("waits for datastore missing-profiles-c"))
	}).Should(Succeed())
	g.Eventually(func() error {
		return env.Client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "missing-profiles-c1"}, &v1alpha1.SecuredDatastore{})
	}).Should(Succeed(), "every cell gets its datastore")

	// Cancelled before any repetition: the datastores go, the (empty) report stays.
	cancel := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"cancel":true}}`))
	g.Expect(env.Client.Patch(context.Background(), s, cancel)).To(Succeed())
	g.Eventually(func(g Gomega) {
		st := get(g, s)
		g.Expect(st.Status.Phase).To(Equal(v1alpha1.StudyCancelled))
		g.Expect(condition(st.Status.Conditions, v1alpha1.ConditionComplete).Message).To(ContainSubstring("cancelled by spec.cancel; no profile meets the decision rule"))
		g.Expect(st.Status.ReportConfigMap).To(Equal("missing-profiles-report"))
		for _, name := range []string{"missing-profiles-c0", "missing-profiles-c1"} {
			ds := &v1alpha1.SecuredDatastore{}
			err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: name}, ds)
			g.Expect(apierrors.IsNotFound(err) || ds.DeletionTimestamp != nil).To(BeTrue(), "datastore %s is deleted", name)
		}
	}).Should(Succeed())
}

func externalBenchmark(name string) *v1alpha1.DatastoreBenchmark {
	return &v1alpha1.DatastoreBenchmark{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: v1alpha1.DatastoreBenchmarkSpec{
			Target: v1alpha1.BenchmarkTarget{External: &v1alpha1.ExternalTarget{Engine: v1alpha1.EngineCassandra,
				Endpoints: []string{"cassandra.example:9142"},
				TLS:       &v1alpha1.ClientTLS{Protocol: "TLSv1.3", CipherSuite: "TLS_AES_128_GCM_SHA256"}}},
			Workload:    v1alpha1.Workload{Preset: "A", RecordCount: ptr.To[int64](1000)},
			Load:        v1alpha1.Load{Mode: v1alpha1.LoadMaxThroughput},
			Repetitions: ptr.To[int32](2),
		},
	}
}

// finishJob plays kubelet and Job controller, which envtest lacks: the Job's pod terminates
// with the exit code and termination message given, and the Job completes or fails (unless
// the operator already read the succeeded pod and deleted the Job).
func finishJob(t *testing.T, g Gomega, name string, exitCode int32, message string) {
	t.Helper()
	ctx := context.Background()
	job, now := terminatePod(t, g, name, exitCode, message)
	start := metav1.NewTime(now.Add(-time.Minute))
	job.Status.StartTime = &start
	if exitCode == 0 {
		job.Status.Succeeded, job.Status.CompletedIndexes, job.Status.CompletionTime = 1, "0", &now
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now},
		}
	} else {
		job.Status.Failed, job.Status.FailedIndexes = 1, ptr.To("")
		job.Status.FailedIndexes = nil
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", LastTransitionTime: now},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit", LastTransitionTime: now},
		}
	}
	if err := env.Client.Status().Update(ctx, job); exitCode != 0 || !apierrors.IsNotFound(err) {
		g.Expect(err).NotTo(HaveOccurred())
	}
}

// terminatePod plays the kubelet alone: the Job's pod terminates with the exit code and
// termination message given. It returns the Job as it was before, and when the pod ended.
func terminatePod(t *testing.T, g Gomega, name string, exitCode int32, message string) (*batchv1.Job, metav1.Time) {
	t.Helper()
	ctx := context.Background()
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	g.Eventually(func() error { return env.Client.Get(ctx, client.ObjectKeyFromObject(job), job) }).Should(Succeed())
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-0", Namespace: "default", Labels: job.Spec.Template.Labels},
		Spec:       job.Spec.Template.Spec,
	}
	create(t, pod)
	now := metav1.Now()
	pod.Status = corev1.PodStatus{Phase: corev1.PodSucceeded, ContainerStatuses: []corev1.ContainerStatus{{Name: benchmark.ContainerName, Image: "secured.dev/k6:test",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: exitCode, Message: message, StartedAt: now, FinishedAt: now}}}}}
	if exitCode != 0 {
		pod.Status.Phase = corev1.PodFailed
	}
	g.Expect(env.Client.Status().Update(ctx, pod)).To(Succeed())
	return job, now
}

// summaryJSON is a client's termination message for a 10 s window; edits change the summary
// before it is written.
func summaryJSON(t *testing.T, phase string, ops, errs int64, edits ...func(*benchresult.Summary)) string {
	t.Helper()
	end := time.Now().UTC().Truncate(time.Second)
	s := benchresult.Summary{Driver: "k6-ycsb", Phase: phase, Start: end.Add(-10 * time.Second), End: end, Operations: ops, Errors: errs,
		Protocol: "TLSv1.3", Suite: "TLS_AES_128_GCM_SHA256", ClientCPUSeconds: 1.5,
		Latencies: []benchresult.Latency{{Operation: "read", Count: ops, Errors: errs, P50: 800, P95: 1500, P99: 3000, Max: 9000}}}
	if errs > 0 {
		s.FirstError = "read: gocql: no response received from cassandra within timeout period"
	}
	for _, edit := range edits {
		edit(&s)
	}
	b, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// jobGone waits until the controller deleted a finished Job.
func jobGone(g Gomega, name string) {
	g.Eventually(func() bool {
		err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: name}, &batchv1.Job{})
		return apierrors.IsNotFound(err)
	}).Should(BeTrue(), "Job %s is deleted once its results are in status", name)
}

// A benchmark loads with one Job, then measures run after run; a run with client errors does
// not count and is repeated; results come from the pods' termination messages into status.
func TestBenchmarkRunsJobsAndCollectsResults(t *testing.T) {
	g := NewWithT(t)
	b := externalBenchmark("bench-lifecycle")
	// An external target's nodes are not ours to wait for: the run starts at once and says why.
	b.Spec.QuietStart = &v1alpha1.QuietStart{}
	create(t, b)

	load := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "bench-lifecycle-load", Namespace: "default"}}
	g.Eventually(func() error { return env.Client.Get(context.Background(), client.ObjectKeyFromObject(load), load) }).Should(Succeed())
	c := load.Spec.Template.Spec.Containers[0]
	g.Expect(c.Image).To(Equal("secured.dev/k6:test"))
	g.Expect(c.Env).To(ContainElements(
		corev1.EnvVar{Name: "YCSB_PHASE", Value: "load"},
		corev1.EnvVar{Name: "CQL_HOSTS", Value: "cassandra.example:9142"},
		corev1.EnvVar{Name: "CQL_TLS_CIPHER_SUITE", Value: "TLS_AES_128_GCM_SHA256"},
		corev1.EnvVar{Name: "CQL_TLS_SERVER_NAME", Value: "cassandra.example"},
	))
	g.Expect(load.OwnerReferences).To(HaveLen(1))
	g.Expect(get(g, b).Status.Phase).To(Equal(v1alpha1.BenchmarkLoading))

	// Some inserts failed (a node too busy to answer in time): the load runs again, in a Job
	// of its own, and its second pass counts.
	finishJob(t, g, load.Name, 0, summaryJSON(t, "load", 1000, 2))
	jobGone(g, load.Name)
	g.Eventually(func(g Gomega) {
		st := get(g, b).Status
		g.Expect(st.LoadAttempts).To(BeEquivalentTo(1))
		g.Expect(st.Phase).To(Equal(v1alpha1.BenchmarkLoading))
	}).Should(Succeed())
	g.Expect(recordedEvents(g, b, v1alpha1.ReasonLoadRetried)).To(ContainElement(ContainSubstring("the load had 2 failed inserts (first: read: gocql: no response received from cassandra within timeout period): loading again, attempt 2 of 3")))
	finishJob(t, g, load.Name+"-1", 0, summaryJSON(t, "load", 1000, 0))
	jobGone(g, load.Name+"-1")
	g.Eventually(func(g Gomega) {
		g.Expect(condition(get(g, b).Status.Conditions, v1alpha1.ConditionLoaded).Message).To(Equal("1000 records inserted at 100 inserts/s"))
	}).Should(Succeed())

	// Run 0 had client errors: invalid, and a run 2 replaces it.
	finishJob(t, g, "bench-lifecycle-run-0", 0, summaryJSON(t, "run", 5000, 3))
	jobGone(g, "bench-lifecycle-run-0")
	// A pod that succeeded is the run's result before the Job controller says so (here it
	// never does): the next run starts seconds earlier.
	terminatePod(t, g, "bench-lifecycle-run-1", 0, summaryJSON(t, "run", 20000, 0))
	jobGone(g, "bench-lifecycle-run-1")
	finishJob(t, g, "bench-lifecycle-run-2", 0, summaryJSON(t, "run", 30000, 0))
	g.Eventually(func(g Gomega) {
		st := get(g, b).Status
		g.Expect(st.Phase).To(Equal(v1alpha1.BenchmarkSucceeded))
		g.Expect(st.Runs).To(HaveLen(3))
		g.Expect(st.Runs[0].Phase).To(Equal(v1alpha1.RunInvalid))
		g.Expect(st.Runs[0].InvalidReason).To(ContainSubstring("3 client errors (first: read: gocql: no response"))
		g.Expect(st.Runs[1].Phase).To(Equal(v1alpha1.RunSucceeded))
		g.Expect(st.Runs[1].ThroughputOpsPerSec).To(Equal(int64(2000)))
		g.Expect(st.Runs[1].NegotiatedCipherSuite).To(Equal("TLS_AES_128_GCM_SHA256"))
		g.Expect(st.Runs[1].ClientCPUMillis).To(Equal(int64(1500)))
		g.Expect(st.Runs[1].CPU).To(Equal(&v1alpha1.RunCPU{Unavailable: "the operator reads no CPU accounting: give it a Prometheus that scrapes the kubelets (--cpu-accounting-prometheus-url)"}))
		g.Expect(st.Runs[1].QuietStart).NotTo(BeNil())
		g.Expect(st.Runs[1].QuietStart.Outcome).To(Equal(v1alpha1.QuietUnmeasured))
		g.Expect(st.Runs[1].QuietStart.Message).To(ContainSubstring("--cpu-accounting-prometheus-url"))
		g.Expect(st.Runs[1].Latencies).To(Equal([]v1alpha1.LatencySummary{{Operation: "read", Count: 20000, P50Micros: 800, P95Micros: 1500, P99Micros: 3000, MaxMicros: 9000}}))
		g.Expect(st.MedianThroughputOpsPerSec).To(Equal(int64(2500)))
		g.Expect(condition(st.Conditions, v1alpha1.ConditionComplete).Reason).To(Equal("Succeeded"))
		g.Expect(st.Profile).To(Equal("external"))
	}).Should(Succeed())
	jobGone(g, "bench-lifecycle-run-2")

	// The valid runs' results are series; the invalid run is not one.
	labels := []string{"default", "bench-lifecycle", "external", "external", "A"}
	g.Expect(testutil.ToFloat64(benchmarkMedianOps.WithLabelValues(labels...))).To(Equal(2500.0))
	g.Expect(testutil.ToFloat64(benchmarkRunOps.WithLabelValues(append(labels, "2")...))).To(Equal(3000.0))
	g.Expect(testutil.ToFloat64(benchmarkRunLatency.WithLabelValues(append(labels, "1", "read", "0.99")...))).To(Equal(0.003))
	g.Expect(testutil.CollectAndCount(benchmarkRunOps)).To(Equal(2), "runs 1 and 2, not the invalid run 0")
	g.Expect(env.Client.Delete(context.Background(), b)).To(Succeed())
	g.Eventually(func() int {
		return testutil.CollectAndCount(benchmarkMedianOps) + testutil.CollectAndCount(benchmarkRunOps)
	}).
		Should(BeZero(), "a deleted benchmark's series are dropped")
}

// A client that refuses the server's suite fails the run and the benchmark with k6's words;
// it is not repeated, since repeating cannot change the server's choice.
func TestBenchmarkFailsWhenTheClientRefuses(t *testing.T) {
	g := NewWithT(t)
	b := externalBenchmark("bench-refused")
	b.Spec.SkipLoad = true
	create(t, b)
	refusal := "level=error msg=\"connecting to cassandra.example:9142: the server negotiated TLSv1.3 TLS_AES_256_GCM_SHA384, but the benchmark pins TLSv1.3 TLS_AES_128_GCM_SHA256\""
	finishJob(t, g, "bench-refused-run-0", 107, "k6 starting\n"+refusal)
	g.Eventually(func(g Gomega) {
		st := get(g, b).Status
		g.Expect(st.Phase).To(Equal(v1alpha1.BenchmarkFailed))
		g.Expect(st.Runs).To(HaveLen(1))
		g.Expect(st.Runs[0].Phase).To(Equal(v1alpha1.RunFailed))
		c := condition(st.Conditions, v1alpha1.ConditionComplete)
		g.Expect(c.Reason).To(Equal("RunFailed"))
		g.Expect(c.Message).To(ContainSubstring("exited with code 107"))
		g.Expect(c.Message).To(ContainSubstring("but the benchmark pins TLSv1.3 TLS_AES_128_GCM_SHA256"))
	}).Should(Succeed())
	g.Consistently(func() error {
		return env.Client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "bench-refused-run-" + strconv.Itoa(1)}, &batchv1.Job{})
	}, 2*time.Second).ShouldNot(Succeed(), "a failed benchmark starts no further run")
}

// With verifyWrites, the run's Job records and checks its writes; a run whose client found an
// acknowledged write missing fails the benchmark with the counts in status and the first
// problem in the condition: lost data is a finding, not noise to repeat away.
func TestBenchmarkFailsWhenAnAcknowledgedWriteIsLost(t *testing.T) {
	g := NewWithT(t)
	b := externalBenchmark("bench-lost")
	b.Spec.SkipLoad, b.Spec.VerifyWrites = true, true
	create(t, b)
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "bench-lost-run-0", Namespace: "default"}}
	g.Eventually(func() error { return env.Client.Get(context.Background(), client.ObjectKeyFromObject(job), job) }).Should(Succeed())
	g.Expect(job.Spec.Template.Spec.Containers[0].Env).To(ContainElements(
		corev1.EnvVar{Name: "YCSB_HISTORY_FILE", Value: "/var/run/ycsb/history"},
		corev1.EnvVar{Name: "YCSB_VERIFY_WRITES", Value: "true"},
	))

	var s benchresult.Summary
	g.Expect(json.Unmarshal([]byte(summaryJSON(t, "run", 20000, 0)), &s)).To(Succeed())
	s.Writes = &benchresult.Writes{Acknowledged: 10000, Checked: 900, Verified: 898, Lost: 1, Stale: 1, Consistency: "ALL",
		FirstProblem: "user42 field3: the write acknowledged at 2026-11-25T23:00:00.000000Z is not there: no record has the key"}
	msg, err := s.Marshal()
	g.Expect(err).NotTo(HaveOccurred())
	finishJob(t, g, job.Name, 0, string(msg))
	g.Eventually(func(g Gomega) {
		st := get(g, b).Status
		g.Expect(st.Phase).To(Equal(v1alpha1.BenchmarkFailed))
		g.Expect(st.Runs).To(HaveLen(1))
		g.Expect(st.Runs[0].Phase).To(Equal(v1alpha1.RunFailed))
		g.Expect(st.Runs[0].Writes).To(Equal(&v1alpha1.RunWrites{Acknowledged: 10000, Checked: 900, Verified: 898, Lost: 1, Stale: 1, FirstProblem: s.Writes.FirstProblem}))
		c := condition(st.Conditions, v1alpha1.ConditionComplete)
		g.Expect(c.Reason).To(Equal("RunFailed"))
		g.Expect(c.Message).To(ContainSubstring("2 of 900 acknowledged key-fields not read back intact at ALL: 1 lost, 1 stale"))
		g.Expect(c.Message).To(ContainSubstring("user42 field3"))
	}).Should(Succeed())
}

// An external HBase is measured by the JVM driver from what the spec says of it, and Ready
// says how the client reaches it: the registry's endpoints, the login and its SASL level, the
// TLS pin and the CAs it verifies against.
func TestBenchmarkOfAnExternalHBase(t *testing.T) {
	g := NewWithT(t)
	b := externalBenchmark("bench-external-hbase")
	b.Spec.Target.External = &v1alpha1.ExternalTarget{Engine: v1alpha1.EngineHBase, Endpoints: []string{"hmaster.example:16000"},
		TLS: &v1alpha1.ClientTLS{Protocol: "TLSv1.2", CipherSuite: "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", CASecretRef: &v1alpha1.SecretKeyReference{Name: "hbase-ca", Key: "ca.crt"}},
		HBase: &v1alpha1.ExternalHBase{Kerberos: &v1alpha1.ExternalKerberos{Principal: "ycsb@HBASE.EXAMPLE",
			KeytabSecretRef: v1alpha1.SecretKeyReference{Name: "ycsb-keytab", Key: "keytab"}, Krb5ConfigMapRef: v1alpha1.ConfigMapKeyReference{Name: "realm", Key: "krb5.conf"}}}}
	create(t, b)
	g.Eventually(func(g Gomega) {
		ready := condition(get(g, b).Status.Conditions, v1alpha1.ConditionReady)
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(ready.Message).To(Equal("HBase bootstrapped from [hmaster.example:16000] with YCSB's JVM client, logged in as ycsb@HBASE.EXAMPLE (SASL privacy), " +
			"TLS (TLSv1.2; TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256) verified against the CAs in key ca.crt of Secret hbase-ca"))
	}).Should(Succeed())
	load := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "bench-external-hbase-load", Namespace: "default"}}
	g.Eventually(func() error { return env.Client.Get(context.Background(), client.ObjectKeyFromObject(load), load) }).Should(Succeed())
	pod := load.Spec.Template.Spec
	g.Expect(pod.Containers[0].Image).To(Equal("secured.dev/ycsb-hbase:test"))
	g.Expect(pod.Containers[0].Command).To(ContainElements("principal=ycsb@HBASE.EXAMPLE", "hbase.client.bootstrap.servers=hmaster.example:16000", "hbase.rpc.tls.truststore.type=PEM"))
	var mounted []string
	for _, v := range pod.Volumes {
		switch {
		case v.Secret != nil:
			mounted = append(mounted, "Secret "+v.Secret.SecretName)
		case v.ConfigMap != nil:
			mounted = append(mounted, "ConfigMap "+v.ConfigMap.Name)
		}
	}
	g.Expect(mounted).To(ConsistOf("Secret hbase-ca", "Secret ycsb-keytab", "ConfigMap realm"))

	zk := externalBenchmark("bench-external-hbase-zk")
	zk.Spec.Target.External = &v1alpha1.ExternalTarget{Engine: v1alpha1.EngineHBase, Endpoints: []string{"zk-0.example:2181", "zk-1.example:2181"},
		HBase: &v1alpha1.ExternalHBase{Registry: v1alpha1.RegistryZooKeeper}}
	create(t, zk)
	g.Eventually(func(g Gomega) {
		g.Expect(condition(get(g, zk).Status.Conditions, v1alpha1.ConditionReady).Message).To(Equal("HBase found through ZooKeeper at [zk-0.example:2181 zk-1.example:2181] with YCSB's JVM client"))
	}).Should(Succeed())
}
