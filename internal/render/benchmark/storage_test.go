package benchmark

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/datakeys"
	"secured.dev/operator/internal/render/podtemplate"
	"secured.dev/operator/internal/test/golden"
)

func storageBenchmark(pattern v1alpha1.StoragePattern) *v1alpha1.DatastoreBenchmark {
	return &v1alpha1.DatastoreBenchmark{
		ObjectMeta: metav1.ObjectMeta{Name: "orders-disk", Namespace: "shop"},
		Spec: v1alpha1.DatastoreBenchmarkSpec{
			Target:   v1alpha1.BenchmarkTarget{DatastoreRef: &v1alpha1.SecuredDatastoreReference{Name: "orders"}},
			Workload: v1alpha1.Workload{Storage: &v1alpha1.StorageWorkload{Pattern: pattern, FileSizeMiB: ptr.To[int32](256)}},
		},
	}
}

// A storage workload on a datastore whose profile encrypts volumes: fio on a scratch volume of
// the datastore's StorageClass, readied by the same init container as the datastore's data,
// and nothing of the datastore's logins, certificates or client keys in the pod.
func TestStorageJobsEncryptTheirScratchVolumeAsTheDatastoreDoes(t *testing.T) {
	ds := tlsDatastore()
	ds.Spec.Cassandra = &v1alpha1.CassandraTopology{Storage: v1alpha1.StorageSpec{StorageClassName: ptr.To("encryptable")}}
	ds.Status.Encryption.Effective.AtRest = &v1alpha1.AtRestEncryption{Volume: &v1alpha1.VolumeAtRest{Method: v1alpha1.VolumeFscrypt}}
	target, err := DatastoreTarget(ds, "cluster.local")
	if err != nil {
		t.Fatal(err)
	}
	if target.StorageClass != "encryptable" || target.VolumeKeySecret != datakeys.AtRestSecret(ds) {
		t.Fatalf("storage class %q, volume key Secret %q", target.StorageClass, target.VolumeKeySecret)
	}
	j := Job{Benchmark: storageBenchmark(v1alpha1.StorageRandomRead), Target: target, Phase: PhaseRun, Image: "secured.dev/storage-bench:test", VolumeEncryptionImage: "secured.dev/volume-encryption:test"}
	out := renderJobs(t, j)
	golden.Check(t, "storage-job.yaml", out)
	for _, absent := range []string{"login", "client-tls", "client-keys", "ca.crt", target.LoginSecret} {
		if absent != "" && strings.Contains(string(out), absent) {
			t.Errorf("the storage Job mounts %q, which it does not need", absent)
		}
	}

	job, err := Build(j)
	if err != nil {
		t.Fatal(err)
	}
	pod := job.Spec.Template.Spec
	if len(pod.InitContainers) != 1 || pod.InitContainers[0].Name != podtemplate.VolumeEncryptionContainer ||
		!slices.Contains(pod.InitContainers[0].Args, "--dir="+scratchDir) || !slices.Contains(pod.Containers[0].Args, "--dir="+scratchDir) {
		t.Errorf("fio must write into the directory the init container encrypts: %v, %v", pod.InitContainers, pod.Containers[0].Args)
	}
	if !slices.Contains(pod.Containers[0].Args, "--block-size-kib=8") {
		t.Errorf("a random pattern defaults to 8 KiB blocks: %v", pod.Containers[0].Args)
	}
	claim := pod.Volumes[0].Ephemeral.VolumeClaimTemplate.Spec
	if got := claim.Resources.Requests[corev1.ResourceStorage]; got.Value() != 320<<20 || ptr.Deref(claim.StorageClassName, "") != "encryptable" {
		t.Errorf("scratch claim %v of class %v; want 320Mi (256Mi and a quarter) of encryptable", got.String(), claim.StorageClassName)
	}
	for _, c := range pod.Containers {
		for _, m := range c.VolumeMounts {
			if m.Name == datakeys.VolumeKeyVolume {
				t.Errorf("container %s sees the volume key", c.Name)
			}
		}
	}
}

// Without volume encryption the scratch volume is plain, on the cluster's default class when
// the datastore names none, and a sequential pattern defaults to 64 KiB blocks.
func TestStorageJobsOfAPlainDatastoreUseAPlainVolume(t *testing.T) {
	target, err := DatastoreTarget(tlsDatastore(), "cluster.local")
	if err != nil {
		t.Fatal(err)
	}
	job, err := Build(Job{Benchmark: storageBenchmark(v1alpha1.StorageSequentialWrite), Target: target, Phase: PhaseRun, Image: "secured.dev/storage-bench:test"})
	if err != nil {
		t.Fatal(err)
	}
	pod := job.Spec.Template.Spec
	if len(pod.InitContainers) != 0 || len(pod.Volumes) != 1 || pod.Volumes[0].Ephemeral.VolumeClaimTemplate.Spec.StorageClassName != nil {
		t.Errorf("a plain datastore's scratch volume: init %v, volumes %v", pod.InitContainers, pod.Volumes)
	}
	if !slices.Contains(pod.Containers[0].Args, "--block-size-kib=64") {
		t.Errorf("a sequential pattern defaults to 64 KiB blocks: %v", pod.Containers[0].Args)
	}
	if pod.Affinity != nil || pod.NodeSelector != nil {
		t.Errorf("a datastore placed anywhere: affinity %v, node selector %v", pod.Affinity, pod.NodeSelector)
	}
}

// The scratch volume is measured on the kind of node the datastore runs on: its placement's
// node selector, tolerations and CPU features.
func TestStorageJobsRunWhereTheDatastoreMayRun(t *testing.T) {
	ds := tlsDatastore()
	ds.Spec.Placement = &v1alpha1.PlacementSpec{CryptoAcceleration: v1alpha1.AccelerationRequired, NodeSelector: map[string]string{"disk": "nvme"},
		Tolerations: []corev1.Toleration{{Key: "storage", Operator: corev1.TolerationOpExists}}}
	target, err := DatastoreTarget(ds, "cluster.local")
	if err != nil {
		t.Fatal(err)
	}
	job, err := Build(Job{Benchmark: storageBenchmark(v1alpha1.StorageRandomRead), Target: target, Phase: PhaseRun, Image: "secured.dev/storage-bench:test", FeatureLabelPrefix: "feature.node.kubernetes.io/cpu-cpuid."})
	if err != nil {
		t.Fatal(err)
	}
	pod := job.Spec.Template.Spec
	if pod.NodeSelector["disk"] != "nvme" || len(pod.Tolerations) != 1 || pod.Affinity == nil || pod.Affinity.NodeAffinity == nil ||
		!strings.Contains(pod.Affinity.NodeAffinity.String(), "feature.node.kubernetes.io/cpu-cpuid.AESNI") {
		t.Errorf("node selector %v, tolerations %v, affinity %v", pod.NodeSelector, pod.Tolerations, pod.Affinity)
	}
}
