package podtemplate

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Deviation is a policy of Checkov (the manifest scanner make test runs on everything the
// operator renders, internal/test/checkov) that a workload departs from on purpose. Checkov
// reads deviations, with their reasons, from checkov.io/skipN annotations on the object; any
// other failed check fails the test.
type Deviation struct{ Check, Reason string }

// The deviations of the operator's workloads, each said once.
var (
	ImageByTag             = Deviation{"CKV_K8S_43", "images are the references the operator is configured with (its --*-image flags, spec.image); give a digest there to pin the bytes"}
	PullIfNotPresent       = Deviation{"CKV_K8S_15", "IfNotPresent: clusters that load images into their nodes (Kind) have no registry to pull from again; a digest reference makes Always pointless"}
	NoCPULimit             = Deviation{"CKV_K8S_11", "no CPU limit: CFS throttling would distort the latency and CPU per operation the product measures; CPU requests reserve the capacity"}
	ImageServiceUser       = Deviation{"CKV_K8S_40", "runs as the image's service user (a UID below 10000) that owns the data and keytab volumes; runAsNonRoot is enforced"}
	TunnelNetAdmin         = Deviation{"CKV_K8S_25", "the tunnel sidecar adds NET_ADMIN to create its interface and its nftables rule; every other container drops ALL"}
	ReloaderLiveness       = Deviation{"CKV_K8S_8", "the TLS reloader sidecar serves nothing to probe: it exits, and is restarted, when it fails; the datastore container has its probes"}
	ReloaderReadiness      = Deviation{"CKV_K8S_9", "the TLS reloader sidecar serves no traffic, so it has no readiness; the datastore container has its probes"}
	UserMemoryLimit        = Deviation{"CKV_K8S_13", "memory is what spec.<engine>.resources says, and this datastore sets no limit there"}
	KeystorePasswordEnv    = Deviation{"CKV_K8S_35", "the entrypoint reads the keystore password from the environment; it protects only the keystore mounted beside it in the same pod"}
	ClientListensOnNothing = Deviation{"CKV2_K8S_6", "a benchmark client opens connections and listens on no port: there is nothing for an ingress policy to admit"}
)

// Annotate records the deviations on obj as Checkov's skip annotations, in check order so that
// the rendered object is stable.
func Annotate(obj *metav1.ObjectMeta, deviations ...Deviation) {
	if len(deviations) == 0 {
		return
	}
	sort.Slice(deviations, func(i, j int) bool { return deviations[i].Check < deviations[j].Check })
	if obj.Annotations == nil {
		obj.Annotations = map[string]string{}
	}
	for i, d := range deviations {
		obj.Annotations[fmt.Sprintf("checkov.io/skip%d", i+1)] = d.Check + "=" + d.Reason
	}
}

// WorkloadDeviations are those of every datastore and benchmark pod, plus ResourceDeviations of
// its containers.
func WorkloadDeviations(spec corev1.PodSpec) []Deviation {
	return append([]Deviation{ImageByTag, PullIfNotPresent, NoCPULimit}, resourceDeviations(spec)...)
}

// resourceDeviations: a container without a memory limit is one whose user asked for none
// (the operator sets one on everything it sizes itself).
func resourceDeviations(spec corev1.PodSpec) []Deviation {
	for _, c := range spec.Containers {
		if _, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok {
			return []Deviation{UserMemoryLimit}
		}
	}
	return nil
}
