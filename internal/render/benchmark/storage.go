package benchmark

import (
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/placement"
	"secured.dev/operator/internal/render/podtemplate"
)

// Defaults of a storage workload: seed 002's block sizes (64 KiB sequential, 8 KiB random).
const (
	DefaultFileSizeMiB          = 1024
	DefaultSequentialBlockKiB   = 64
	DefaultRandomBlockKiB       = 8
	scratchVolume               = "scratch"
	scratchMount                = "/scratch"
	scratchDir                  = scratchMount + "/data"
	storageClientMemoryLimitMiB = 256
)

// BlockSizeKiB of a storage workload, with its default.
func BlockSizeKiB(w *v1alpha1.StorageWorkload) int32 {
	switch {
	case w.BlockSizeKiB != nil:
		return *w.BlockSizeKiB
	case w.Pattern == v1alpha1.StorageRandomRead || w.Pattern == v1alpha1.StorageRandomWrite:
		return DefaultRandomBlockKiB
	}
	return DefaultSequentialBlockKiB
}

// storageJob measures the datastore's storage: fio (cmd/storage-bench) on a generic ephemeral
// volume of the datastore's StorageClass, a quarter larger than the file and deleted with the
// pod, readied by the datastore's own volume-encryption init container when its profile
// encrypts volumes. The pod mounts nothing else: no login, certificate or key but the volume
// key, which only the init container sees. Its memory limit keeps the page cache, which the
// cgroup is charged for, small beside the file, so reads reach the volume.
func storageJob(j Job) (*batchv1.Job, error) {
	w := j.Benchmark.Spec.Workload.Storage
	fileMiB := ptr.Deref(w.FileSizeMiB, DefaultFileSizeMiB)
	spec := clientPod(j)
	c := &spec.Containers[0]
	c.Args = []string{"--dir=" + scratchDir, "--pattern=" + string(w.Pattern),
		"--block-size-kib=" + strconv.Itoa(int(BlockSizeKiB(w))), "--file-size-mib=" + strconv.Itoa(int(fileMiB)),
		"--duration=" + duration(j.Benchmark).String()}
	c.Resources.Requests[corev1.ResourceMemory] = resource.MustParse("64Mi")
	c.Resources.Limits[corev1.ResourceMemory] = *resource.NewQuantity(storageClientMemoryLimitMiB<<20, resource.BinarySI)
	c.VolumeMounts = []corev1.VolumeMount{{Name: scratchVolume, MountPath: scratchMount}}
	claim := corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceStorage: *resource.NewQuantity(int64(fileMiB)<<20*5/4, resource.BinarySI)}},
	}
	if j.Target.StorageClass != "" {
		claim.StorageClassName = ptr.To(j.Target.StorageClass)
	}
	spec.Volumes = []corev1.Volume{{Name: scratchVolume, VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
		VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{Spec: claim}}}}}
	if p := j.Target.Placement; p != nil {
		// The volume is measured on the kind of node the datastore runs on: its CPU features
		// (the kernel's AES) and its disks.
		spec.Affinity = placement.Affinity(p, j.FeatureLabelPrefix)
		spec.NodeSelector, spec.Tolerations = p.NodeSelector, p.Tolerations
	}
	if j.Target.VolumeKeySecret != "" {
		spec.InitContainers = []corev1.Container{podtemplate.VolumeEncryption(j.VolumeEncryptionImage, scratchVolume, scratchMount, scratchDir)}
		spec.Volumes = append(spec.Volumes, podtemplate.VolumeKey(j.Target.VolumeKeySecret))
	}
	job := indexedJob(j, spec, podtemplate.ClientListensOnNothing)
	if job.Spec.ActiveDeadlineSeconds != nil {
		// Laying the file out and a sequential pass over it, at 1 MiB/s at worst.
		*job.Spec.ActiveDeadlineSeconds += 2 * int64(fileMiB)
	}
	return job, nil
}
