package benchmark

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/hbase"
	"secured.dev/operator/internal/render/podtemplate"
	"secured.dev/operator/internal/render/vpn"
)

// Phases of a benchmark's Jobs.
const (
	PhaseLoad = "load"
	PhaseRun  = "run"
)

// Defaults of a benchmark.
const (
	DefaultRecordCount  = 100_000
	DefaultVirtualUsers = 32
	DefaultRepetitions  = 3
	DefaultDuration     = 60 * time.Second
	DefaultWarmUp       = 30 * time.Second
)

// Labels on the Jobs and their pods; the controller finds a run's pods by them.
const (
	LabelBenchmark = "datastore.secured.dev/benchmark"
	LabelPhase     = "datastore.secured.dev/benchmark-phase"
	LabelRun       = "datastore.secured.dev/benchmark-run"
)

// ContainerName of the client in the Job's pods; its termination message is the summary.
const ContainerName = "client"

const (
	script  = "/bench/k6/ycsb.js"
	caMount = "/etc/secured/ca"
	// loginMount holds the client login Secret's username and password files.
	loginMount = "/etc/secured/login"
	// clientKeysMount holds the client-side keys (pkg/fieldcrypt's files).
	clientKeysMount = "/etc/secured/client-keys"
	// clientCertMount holds the client certificate (tls.crt, tls.key) of a datastore whose
	// client channel demands one.
	clientCertMount = "/etc/secured/client-tls"
	// historyMount holds the write history of spec.verifyWrites: the root file system is
	// read-only.
	historyMount = "/var/run/ycsb"
)

// Job is what one Job is built from.
type Job struct {
	Benchmark *v1alpha1.DatastoreBenchmark
	Target    Target
	// Phase: PhaseLoad or PhaseRun; Run is the run's index for PhaseRun, the attempt's for
	// PhaseLoad.
	Phase string
	Run   int32
	// Image of the client: k6, YCSB's JVM client for HBase, storage-bench for a storage
	// workload.
	Image string
	// RemoteWriteURL of Prometheus; empty publishes nothing.
	RemoteWriteURL string
	// VPNImage runs the tunnel sidecar when the target's tunnel carries client traffic;
	// KeyServer is where the sidecar fetches its client slot's key.
	VPNImage  string
	KeyServer vpn.KeyServer
	// VolumeEncryptionImage readies a storage workload's scratch volume when the datastore's
	// profile encrypts volumes; FeatureLabelPrefix names the nodes' CPU-feature labels its
	// placement selects on.
	VolumeEncryptionImage, FeatureLabelPrefix string
}

// Measurable says why the benchmark cannot measure its target, naming the field to change; nil
// when it can.
func Measurable(b *v1alpha1.DatastoreBenchmark, t Target) error {
	if pods := ClientPods(b); t.Tunnel != nil && pods > vpn.ClientSlots {
		return fmt.Errorf("spec.load.clientPods is %d, but the tunnel of SecuredDatastore %s admits %d clients: set clientPods to at most %d", pods, t.Datastore, vpn.ClientSlots, vpn.ClientSlots)
	}
	return nil
}

// Name of a benchmark's Job.
func Name(b *v1alpha1.DatastoreBenchmark, phase string, run int32) string {
	if phase == PhaseLoad {
		if run > 0 {
			return fmt.Sprintf("%s-load-%d", b.Name, run)
		}
		return b.Name + "-load"
	}
	return fmt.Sprintf("%s-run-%d", b.Name, run)
}

// PodLabels select the pods of one Job.
func PodLabels(b *v1alpha1.DatastoreBenchmark, phase string, run int32) map[string]string {
	name := "k6-ycsb"
	if b.Spec.Workload.Storage != nil {
		name = "fio"
	}
	l := map[string]string{
		"app.kubernetes.io/name":       name,
		"app.kubernetes.io/instance":   b.Name,
		"app.kubernetes.io/managed-by": "secured-datastore-operator",
		"app.kubernetes.io/component":  "benchmark",
		LabelBenchmark:                 b.Name,
		LabelPhase:                     phase,
	}
	if phase == PhaseRun || run > 0 { // a load's attempts after the first too
		l[LabelRun] = strconv.Itoa(int(run))
	}
	return l
}

// ClientPods is the number of client pods with its default.
func ClientPods(b *v1alpha1.DatastoreBenchmark) int32 {
	return ptr.Deref(b.Spec.Load.ClientPods, 1)
}

// Repetitions with its default.
func Repetitions(b *v1alpha1.DatastoreBenchmark) int32 {
	return ptr.Deref(b.Spec.Repetitions, DefaultRepetitions)
}

// Build renders the Job: an Indexed Job of ClientPods pods that fail once and are not
// retried (a run that lost a client is repeated by the controller, not patched up by the Job).
// Cassandra is measured with k6 and our extension, HBase with YCSB's JVM client and our
// binding, a storage workload with fio (storage.go).
func Build(j Job) (*batchv1.Job, error) {
	b := j.Benchmark
	if err := Measurable(b, j.Target); err != nil {
		return nil, err
	}
	if b.Spec.Workload.Storage != nil {
		return storageJob(j)
	}
	spec := clientPod(j)
	spec.Containers[0].Args, spec.Containers[0].Env = args(j), env(j)
	if h := j.Target.HBase; h != nil {
		props, err := driverProperties(j)
		if err != nil {
			return nil, err
		}
		c := &spec.Containers[0]
		c.Args, c.Command = nil, driverCommand(j, props)
		c.Env = []corev1.EnvVar{{Name: "YCSB_PHASE", Value: j.Phase}, {Name: "HADOOP_USER_NAME", Value: "ycsb"}}
		spec.Volumes, c.VolumeMounts = hbaseVolumes(h)
		// The image's user, so that the JVM has a home and a name; the keytab is group-readable.
		u := ptr.To[int64](hbase.HBaseUser)
		spec.SecurityContext.RunAsUser, spec.SecurityContext.RunAsGroup, spec.SecurityContext.FSGroup = u, u, u
	}
	if verifiesWrites(j) {
		// A history entry is 32 bytes: a gibibyte holds 33 million writes.
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: "history", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("1Gi"))}}})
		spec.Containers[0].VolumeMounts = append(spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "history", MountPath: historyMount})
	}
	if t := j.Target.TLS; t != nil && (t.CA.ConfigMap != "" || t.CA.Secret != "") {
		mountFiles(&spec, t.CA.volume("ca", "ca.crt"), caMount)
	}
	if j.Target.LoginSecret != "" {
		mountFiles(&spec, secretVolume("login", j.Target.LoginSecret, "username", "password"), loginMount)
	}
	if t := j.Target.TLS; t != nil && t.ClientCertSecret != "" {
		mountFiles(&spec, secretVolume("client-tls", t.ClientCertSecret, corev1.TLSCertKey, corev1.TLSPrivateKeyKey), clientCertMount)
	}
	if j.Target.ClientKeysSecret != "" {
		mountFiles(&spec, secretVolume("client-keys", j.Target.ClientKeysSecret), clientKeysMount)
	}
	if p := j.Target.Tunnel; p != nil {
		// Pod i of the indexed Job is the tunnel's client-i.
		sidecar, volumes := vpn.Sidecar(*p, j.VPNImage, j.Target.Datastore, j.KeyServer)
		sidecar.Env = append(sidecar.Env,
			corev1.EnvVar{Name: "JOB_INDEX", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}},
			corev1.EnvVar{Name: "VPN_NAME", Value: "client-$(JOB_INDEX)"})
		spec.InitContainers = append(spec.InitContainers, sidecar)
		spec.Volumes = append(spec.Volumes, volumes...)
	}
	deviations := []podtemplate.Deviation{podtemplate.ClientListensOnNothing}
	if j.Target.HBase != nil {
		deviations = append(deviations, podtemplate.ImageServiceUser)
	}
	if j.Target.Tunnel != nil {
		deviations = append(deviations, podtemplate.TunnelNetAdmin)
	}
	return indexedJob(j, spec, deviations...), nil
}

// clientPod is the client's pod before its driver is chosen: restricted, no service account
// token, the summary in the termination message.
func clientPod(j Job) corev1.PodSpec {
	return corev1.PodSpec{
		RestartPolicy:                 corev1.RestartPolicyNever,
		AutomountServiceAccountToken:  ptr.To(false),
		EnableServiceLinks:            ptr.To(false),
		TerminationGracePeriodSeconds: ptr.To[int64](10),
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot: ptr.To(true),
			RunAsUser:    ptr.To[int64](65532),
			RunAsGroup:   ptr.To[int64](65532),
			// Owns the mounted Secrets' files, which are group-readable only.
			FSGroup:        ptr.To[int64](65532),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Containers: []corev1.Container{{
			Name:  ContainerName,
			Image: j.Image,
			// The summary goes to the termination message; if the client fails before writing
			// it (a refused TLS pin), the end of its log says why.
			TerminationMessagePath:   corev1.TerminationMessagePathDefault,
			TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")},
			},
			SecurityContext: podtemplate.Restricted(),
		}},
	}
}

// indexedJob runs spec in ClientPods pods; a run's Job ends at the latest ten minutes after
// the run's own length.
func indexedJob(j Job, spec corev1.PodSpec, deviations ...podtemplate.Deviation) *batchv1.Job {
	b, pods := j.Benchmark, ClientPods(j.Benchmark)
	labels := PodLabels(b, j.Phase, j.Run)
	job := &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: Name(b, j.Phase, j.Run), Namespace: b.Namespace, Labels: labels},
		Spec: batchv1.JobSpec{
			CompletionMode: ptr.To(batchv1.IndexedCompletion),
			Completions:    ptr.To(pods),
			Parallelism:    ptr.To(pods),
			BackoffLimit:   ptr.To[int32](0),
			Template:       corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}
	podtemplate.Annotate(&job.ObjectMeta, append(podtemplate.WorkloadDeviations(spec), deviations...)...)
	if j.Phase == PhaseRun {
		// A hung client must not hold the benchmark forever.
		job.Spec.ActiveDeadlineSeconds = ptr.To(int64((longestWarmUp(j) + duration(b) + 10*time.Minute).Seconds()))
	}
	return job
}

func args(j Job) []string {
	a := []string{"run", "--no-usage-report", "--no-color", "--quiet"}
	if j.RemoteWriteURL != "" {
		a = append(a, "--out", "experimental-prometheus-rw")
		for _, t := range tags(j) {
			a = append(a, "--tag", literal(t))
		}
	}
	return append(a, script)
}

// tags label every published series of a Job, for either driver.
func tags(j Job) []string {
	t := []string{"benchmark=" + j.Benchmark.Name, "namespace=" + j.Benchmark.Namespace, "phase=" + j.Phase}
	if j.Target.Datastore != "" {
		t = append(t, "datastore="+j.Target.Datastore)
	}
	if j.Phase == PhaseRun {
		t = append(t, "run="+strconv.Itoa(int(j.Run)))
	}
	return t
}

func env(j Job) []corev1.EnvVar {
	b, w := j.Benchmark, j.Benchmark.Spec.Workload
	pods := int64(ClientPods(b))
	vars := [][2]string{
		{"YCSB_PHASE", j.Phase},
		{"YCSB_WORKLOAD", string(w.Preset)},
		{"YCSB_RECORD_COUNT", strconv.FormatInt(ptr.Deref(w.RecordCount, DefaultRecordCount), 10)},
		{"YCSB_VUS", strconv.Itoa(int(ptr.Deref(b.Spec.Load.VirtualUsers, DefaultVirtualUsers)))},
		{"YCSB_CLIENTS", strconv.FormatInt(pods, 10)},
		{"YCSB_PROFILE", j.Target.Profile},
		{"YCSB_SUMMARY_FILE", corev1.TerminationMessagePathDefault},
		{"CQL_HOSTS", strings.Join(j.Target.Hosts, ",")},
	}
	if w.Preset == "" {
		vars[1][1] = "A" // the proportions below replace its mix
	}
	add := func(k, v string) { vars = append(vars, [2]string{k, v}) }
	if w.FieldCount != nil {
		add("YCSB_FIELD_COUNT", strconv.Itoa(int(*w.FieldCount)))
	}
	if w.FieldLength != nil {
		add("YCSB_FIELD_LENGTH", strconv.Itoa(int(*w.FieldLength)))
	}
	if w.Table != "" {
		add("CQL_TABLE", w.Table)
	}
	if w.RequestDistribution != "" {
		add("YCSB_REQUEST_DISTRIBUTION", string(w.RequestDistribution))
	}
	if p := w.Proportions; p != nil {
		add("YCSB_PROPORTIONS", fmt.Sprintf("read=%g,update=%g,insert=%g,scan=%g,readModifyWrite=%g",
			float64(p.Read)/100, float64(p.Update)/100, float64(p.Insert)/100, float64(p.Scan)/100, float64(p.ReadModifyWrite)/100))
	}
	if j.Phase == PhaseLoad {
		add("CQL_REPLICATION_FACTOR", strconv.Itoa(int(max(j.Target.ReplicationFactor, 1))))
	} else {
		if w := untilSteady(j); w != nil {
			add("YCSB_WARMUP_MIN", w.Minimum.Duration.String())
			add("YCSB_WARMUP_MAX", w.Maximum.Duration.String())
		} else {
			add("YCSB_WARMUP", warmUp(b).String())
		}
		if w.OperationCount != nil {
			add("YCSB_OPERATION_COUNT", strconv.FormatInt(max(*w.OperationCount/pods, 1), 10))
		} else {
			add("YCSB_DURATION", duration(b).String())
		}
		if b.Spec.Load.Mode == v1alpha1.LoadFixedRate && b.Spec.Load.Rate != nil {
			add("YCSB_RATE", strconv.FormatInt(max(*b.Spec.Load.Rate/pods, 1), 10))
		}
		if verifiesWrites(j) {
			add("YCSB_HISTORY_FILE", historyMount+"/history")
			add("YCSB_VERIFY_WRITES", "true")
		}
	}
	if t := j.Target.TLS; t != nil {
		add("CQL_TLS_PROTOCOL", t.Protocol)
		add("CQL_TLS_CIPHER_SUITE", t.CipherSuite)
		add("CQL_TLS_SERVER_NAME", t.ServerName)
		if t.CA.ConfigMap != "" || t.CA.Secret != "" {
			add("CQL_TLS_CA_FILE", caMount+"/ca.crt")
		}
		if t.ClientCertSecret != "" {
			add("CQL_TLS_CERT_FILE", clientCertMount+"/"+corev1.TLSCertKey)
			add("CQL_TLS_KEY_FILE", clientCertMount+"/"+corev1.TLSPrivateKeyKey)
		}
	}
	if j.Target.LoginSecret != "" {
		add("CQL_LOGIN_DIR", loginMount)
	}
	if cs := j.Target.ClientSide; cs != nil {
		c, _, sig := ClientSideAlgorithms(*cs)
		add("YCSB_CLIENT_CIPHER", c.String())
		add("YCSB_CLIENT_SIGNATURE", sig.String())
		add("YCSB_CLIENT_KEY_DIR", clientKeysMount)
		if cs.Fields != nil {
			add("YCSB_CLIENT_FIELDS", strconv.Itoa(int(*cs.Fields)))
		}
	}
	if j.RemoteWriteURL != "" {
		add("K6_PROMETHEUS_RW_SERVER_URL", j.RemoteWriteURL)
		add("K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM", "true")
		add("K6_PROMETHEUS_RW_PUSH_INTERVAL", "5s")
	}
	out := make([]corev1.EnvVar, len(vars))
	for i, v := range vars {
		out[i] = corev1.EnvVar{Name: v[0], Value: literal(v[1])}
	}
	return out
}

// verifiesWrites: the Job's client records and checks its writes (measured runs only).
func verifiesWrites(j Job) bool { return j.Benchmark.Spec.VerifyWrites && j.Phase == PhaseRun }

// literal keeps a value as it is through the kubelet's $(VAR) expansion of commands,
// arguments and environment values: a doubled $ is a literal one.
func literal(s string) string { return strings.ReplaceAll(s, "$", "$$") }

// untilSteady is the steady warm-up of the benchmark's first run, nil for the others: once
// the datastore is warm, warmUp is enough for the client.
func untilSteady(j Job) *v1alpha1.SteadyWarmUp {
	if j.Phase != PhaseRun || j.Run != 0 {
		return nil
	}
	return j.Benchmark.Spec.SteadyWarmUp
}

// longestWarmUp a run can take.
func longestWarmUp(j Job) time.Duration {
	if w := untilSteady(j); w != nil {
		return w.Maximum.Duration
	}
	return warmUp(j.Benchmark)
}

func warmUp(b *v1alpha1.DatastoreBenchmark) time.Duration {
	if b.Spec.WarmUp != nil {
		return b.Spec.WarmUp.Duration
	}
	return DefaultWarmUp
}

func duration(b *v1alpha1.DatastoreBenchmark) time.Duration {
	if d := b.Spec.Workload.Duration; d != nil {
		return d.Duration
	}
	return DefaultDuration
}

// mountFiles adds v to the pod and mounts it read-only at path in the client's container.
func mountFiles(spec *corev1.PodSpec, v corev1.Volume, path string) {
	spec.Volumes = append(spec.Volumes, v)
	spec.Containers[0].VolumeMounts = append(spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: v.Name, MountPath: path, ReadOnly: true})
}

// secretVolume is the Secret's keys as files of their names (every key when none is named),
// readable by the pod's group only.
func secretVolume(name, secret string, keys ...string) corev1.Volume {
	var items []corev1.KeyToPath
	for _, k := range keys {
		items = append(items, corev1.KeyToPath{Key: k, Path: k})
	}
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: secret, Items: items, DefaultMode: ptr.To[int32](0o440)}}}
}
