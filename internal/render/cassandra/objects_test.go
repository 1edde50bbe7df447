package cassandra

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	psapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/crypto"
	"secured.dev/operator/internal/render/certs"
	"secured.dev/operator/internal/render/datakeys"
	"secured.dev/operator/internal/render/podtemplate"
	"secured.dev/operator/internal/render/vpn"
	goldenfile "secured.dev/operator/internal/test/golden"
	"secured.dev/operator/internal/test/samples"
)

// sampleDatastore reads a shipped SecuredDatastore sample and resolves its profile.
func sampleDatastore(t *testing.T, file string) (*v1alpha1.SecuredDatastore, v1alpha1.EffectiveEncryption) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(samples.RepoRoot(), "config", "samples", file))
	if err != nil {
		t.Fatal(err)
	}
	ds := &v1alpha1.SecuredDatastore{}
	if err := yaml.UnmarshalStrict(b, ds); err != nil {
		t.Fatal(err)
	}
	ds.Namespace = "shop"
	var base *v1alpha1.EncryptionSettings
	if ref := ds.Spec.Encryption.ProfileRef; ref != "" {
		p, err := samples.Profile(ref)
		if err != nil {
			t.Fatal(err)
		}
		base = &p.Spec.EncryptionSettings
	}
	res, errs := crypto.Resolve(base, &ds.Spec.Encryption.EncryptionSettings, ds.Spec.Engine, field.NewPath("spec", "encryption"))
	if len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	return ds, res.Effective
}

func build(t *testing.T, ds *v1alpha1.SecuredDatastore, enc v1alpha1.EffectiveEncryption) Objects {
	t.Helper()
	return buildStep(t, ds, Target(enc))
}

func buildStep(t *testing.T, ds *v1alpha1.SecuredDatastore, step Step) Objects {
	t.Helper()
	enc := step.Encryption
	tunnel, err := Tunnel(ds, step, "cluster.local")
	if err != nil {
		t.Fatal(err)
	}
	c := Cluster{Datastore: ds, Step: step, Image: "secured.dev/cassandra:5.0.6", ClusterDomain: "cluster.local", VPNImage: "secured.dev/vpn:test",
		VolumeEncryptionImage: "secured.dev/volume-encryption:test",
		KeyServer:             vpn.KeyServer{URL: "https://keys.secured-system.svc:9444/v1/tunnel-key"},
		OperatorNamespace:     "secured-system", Tunnel: tunnel, CertSecret: certs.NodeSecret(ds), TrustConfigMap: certs.TrustConfigMap(ds)}
	if enc.AtRest != nil {
		c.AtRestSecret = datakeys.AtRestSecret(ds) // the operator made its keys
	}
	objs, err := Build(c)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// The sample datastores render to golden Kubernetes and cert-manager objects.
func TestSampleDatastoreObjects(t *testing.T) {
	for _, file := range []string{"secureddatastore-cassandra-tls13.yaml", "secureddatastore-cassandra-inline.yaml", "secureddatastore-cassandra-wireguard.yaml",
		"secureddatastore-cassandra-data-protection.yaml", "secureddatastore-cassandra-encrypted-volume.yaml"} {
		ds, enc := sampleDatastore(t, file)
		objs := build(t, ds, enc)
		certObjs, err := certs.Build(Certificates(ds, "cluster.local", Target(enc)))
		if err != nil {
			t.Fatal(err)
		}
		goldenfile.Check(t, ds.Name+".objects.yaml", goldenfile.YAML(t, append(certObjs, objs.All()...)))
	}
}

// Every container runs under the Pod Security Standard "restricted", checked by the admission
// library the API server itself uses.
func TestPodsAreRestricted(t *testing.T) {
	ds, enc := sampleDatastore(t, "secureddatastore-cassandra-tls13.yaml")
	sts := build(t, ds, enc).StatefulSet
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	level := psapi.LevelVersion{Level: psapi.LevelRestricted, Version: psapi.LatestVersion()}
	for _, r := range evaluator.EvaluatePod(level, &sts.Spec.Template.ObjectMeta, &sts.Spec.Template.Spec) {
		if !r.Allowed {
			t.Errorf("restricted: %s: %s", r.ForbiddenReason, r.ForbiddenDetail)
		}
	}
}

// An encrypted volume adds one init container, restricted like the rest, that sees the volume
// key alone (not the engine's keystore) and the data volume, while Cassandra does not see the
// volume key; Cassandra keeps every data
// directory below the directory it encrypts. Without its image the datastore is not built.
func TestEncryptedVolumeInitContainer(t *testing.T) {
	ds, enc := sampleDatastore(t, "secureddatastore-cassandra-encrypted-volume.yaml")
	objs := build(t, ds, enc)
	spec := objs.StatefulSet.Spec.Template.Spec
	if len(spec.InitContainers) != 1 || spec.InitContainers[0].Name != "volume-encryption" {
		t.Fatalf("init containers %+v", spec.InitContainers)
	}
	init := spec.InitContainers[0]
	want := []corev1.VolumeMount{{Name: "data", MountPath: PodLayout.DataDir},
		{Name: datakeys.VolumeKeyVolume, MountPath: "/etc/volume-key", ReadOnly: true}}
	if !slices.Equal(init.VolumeMounts, want) || !slices.Contains(init.Args, "--dir="+EncryptedDataDir) {
		t.Errorf("mounts %+v, args %v", init.VolumeMounts, init.Args)
	}
	for _, v := range spec.Volumes {
		if v.Name != datakeys.AtRestVolume {
			continue
		}
		if len(v.Secret.Items) == 0 || slices.ContainsFunc(v.Secret.Items, func(k corev1.KeyToPath) bool { return k.Key == datakeys.VolumeKeyFile }) {
			t.Errorf("Cassandra's at-rest volume may hold the volume key: %+v", v.Secret)
		}
	}
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range evaluator.EvaluatePod(psapi.LevelVersion{Level: psapi.LevelRestricted, Version: psapi.LatestVersion()}, &objs.StatefulSet.Spec.Template.ObjectMeta, &spec) {
		if !r.Allowed {
			t.Errorf("restricted: %s: %s", r.ForbiddenReason, r.ForbiddenDetail)
		}
	}
	yaml := objs.ConfigMap.Data["cassandra.yaml"]
	for _, dir := range []string{"data_file_directories", "commitlog_directory", "saved_caches_directory", "hints_directory"} {
		i := strings.Index(yaml, dir+":")
		if i < 0 || !strings.HasPrefix(strings.TrimLeft(yaml[i+len(dir)+1:], " \n-"), EncryptedDataDir+"/") {
			t.Errorf("%s is not below %s:\n%s", dir, EncryptedDataDir, yaml)
		}
	}
	c := Cluster{Datastore: ds, Step: Target(enc), Image: "secured.dev/cassandra:5.0.6", ClusterDomain: "cluster.local",
		CertSecret: certs.NodeSecret(ds), TrustConfigMap: certs.TrustConfigMap(ds), AtRestSecret: datakeys.AtRestSecret(ds)}
	if _, err := Build(c); err == nil || !strings.Contains(err.Error(), "no volume-encryption image") {
		t.Errorf("without the image: %v", err)
	}
}

// The tunnel sidecar is the one container a VPN profile adds, and all that Pod Security's
// baseline level refuses in it is NET_ADMIN and the /dev/net/tun host device; without it the
// pod is restricted. Its seeds and probes use tunnel addresses.
func TestVPNSidecarAsksForNetAdminAndTunOnly(t *testing.T) {
	ds, enc := sampleDatastore(t, "secureddatastore-cassandra-wireguard.yaml")
	objs := build(t, ds, enc)
	spec := objs.StatefulSet.Spec.Template.Spec
	if len(spec.InitContainers) != 1 || spec.InitContainers[0].RestartPolicy == nil || *spec.InitContainers[0].RestartPolicy != corev1.ContainerRestartPolicyAlways {
		t.Fatalf("want one native sidecar (restartPolicy Always), got %+v", spec.InitContainers)
	}
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var refused []string
	for _, r := range evaluator.EvaluatePod(psapi.LevelVersion{Level: psapi.LevelBaseline, Version: psapi.LatestVersion()}, &objs.StatefulSet.Spec.Template.ObjectMeta, &spec) {
		if !r.Allowed {
			refused = append(refused, r.ForbiddenReason+": "+r.ForbiddenDetail)
		}
	}
	if strings.Join(refused, "\n") != "non-default capabilities: container \"vpn\" must not include \"NET_ADMIN\" in securityContext.capabilities.add\nhostPath volumes: volume \"vpn-tun\"" {
		t.Errorf("baseline refuses:\n%s", strings.Join(refused, "\n"))
	}
	without := spec.DeepCopy()
	without.InitContainers = nil
	without.Volumes = slices.DeleteFunc(without.Volumes, func(v corev1.Volume) bool { return strings.HasPrefix(v.Name, "vpn-") })
	for _, r := range evaluator.EvaluatePod(psapi.LevelVersion{Level: psapi.LevelRestricted, Version: psapi.LatestVersion()}, &objs.StatefulSet.Spec.Template.ObjectMeta, without) {
		if !r.Allowed {
			t.Errorf("without the sidecar, restricted refuses: %s: %s", r.ForbiddenReason, r.ForbiddenDetail)
		}
	}
	if !strings.Contains(objs.ConfigMap.Data["cassandra.yaml"], "seeds: 100.80.0.1:7000,100.80.0.2:7000") {
		t.Errorf("seeds are not the tunnel addresses:\n%s", objs.ConfigMap.Data["cassandra.yaml"])
	}
	if got := spec.Containers[0].LivenessProbe.Exec; got == nil || got.Command[0] != "port-open" {
		t.Errorf("the internode port is in the tunnel but the liveness probe dials the pod address: %+v", spec.Containers[0].LivenessProbe)
	}
	if got := spec.Containers[0].ReadinessProbe.TCPSocket; got == nil {
		t.Errorf("CQL stays on the pod address (scope NodeToNode) but its probe changed: %+v", spec.Containers[0].ReadinessProbe)
	}
}

// Standing by, a node runs the tunnel's sidecar and the NetworkPolicy admits the tunnel, but
// Cassandra stays where it was: on the pod's address for both channels, with the seeds' host
// names and passwords (clients are not in the tunnel yet), probed there.
func TestTunnelStandbyKeepsNodesOnPodAddresses(t *testing.T) {
	ds, enc := sampleDatastore(t, "secureddatastore-cassandra-wireguard.yaml")
	enc.VPN.Scope = v1alpha1.VPNScopeAll // in the tunnel, clients would log in by their tunnel keys
	objs := buildStep(t, ds, Step{Encryption: enc, TunnelStandby: true})
	spec := objs.StatefulSet.Spec.Template.Spec
	if len(spec.InitContainers) != 1 || spec.InitContainers[0].Name != "vpn" {
		t.Fatalf("standing by, the node runs no tunnel sidecar: %+v", spec.InitContainers)
	}
	for _, e := range spec.Containers[0].Env {
		if strings.HasPrefix(e.Name, "VPN_") {
			t.Errorf("standing by, Cassandra is told about the tunnel (%s), and its launcher would bind the tunnel address", e.Name)
		}
	}
	if _, ok := objs.ConfigMap.Data[VPNAddressesFile]; ok {
		t.Error("standing by, the configuration carries the tunnel's address table")
	}
	yaml := objs.ConfigMap.Data["cassandra.yaml"]
	for _, want := range []string{"seeds: ledger-0.ledger-nodes.shop.svc.cluster.local:7000", "authenticator: PasswordAuthenticator"} {
		if !strings.Contains(yaml, want) {
			t.Errorf("standing by, cassandra.yaml lacks %q:\n%s", want, yaml)
		}
	}
	if c := spec.Containers[0]; c.ReadinessProbe.TCPSocket == nil || c.LivenessProbe.TCPSocket == nil {
		t.Errorf("standing by, the probes do not dial the pod's address: %+v %+v", c.ReadinessProbe, c.LivenessProbe)
	}
	udp := false
	for _, rule := range objs.NetworkPolicy.Spec.Ingress {
		for _, p := range rule.Ports {
			udp = udp || (p.Protocol != nil && *p.Protocol == corev1.ProtocolUDP)
		}
	}
	if !udp {
		t.Error("standing by, the NetworkPolicy closes the tunnel's ports: a node moving into the tunnel could not reach this one")
	}
}

func TestPlaintextDatastoreMountsNoCertificates(t *testing.T) {
	ds, _ := sampleDatastore(t, "secureddatastore-cassandra-tls13.yaml")
	plain := v1alpha1.EffectiveEncryption{ClientToNode: v1alpha1.EffectiveChannel{Mode: v1alpha1.ChannelDisabled}, NodeToNode: v1alpha1.EffectiveChannel{Mode: v1alpha1.ChannelDisabled}}
	objs, err := Build(Cluster{Datastore: ds, Step: Target(plain), Image: "img", ClusterDomain: "cluster.local"})
	if err != nil {
		t.Fatal(err)
	}
	pod := objs.StatefulSet.Spec.Template.Spec
	if len(pod.Containers) != 1 || len(pod.Volumes) != 3 {
		t.Errorf("plaintext pod has %d containers and volumes %v; want cassandra only, no tls volume", len(pod.Containers), pod.Volumes)
	}
	if _, err := Build(Cluster{Datastore: ds, Step: Target(plain), Image: "img"}); err != nil {
		t.Fatal(err)
	}
	_, enc := sampleDatastore(t, "secureddatastore-cassandra-tls13.yaml")
	if _, err := Build(Cluster{Datastore: ds, Step: Target(enc), Image: "img"}); err == nil || !strings.Contains(err.Error(), "certificate Secret") {
		t.Errorf("TLS without a certificate Secret: %v", err)
	}
}

func TestEmulatedNoAccelerationReachesBothEngines(t *testing.T) {
	ds, enc := sampleDatastore(t, "secureddatastore-cassandra-tls13.yaml")
	ds.Spec.Placement.EmulateNoAcceleration = true
	objs := build(t, ds, enc)
	if !strings.Contains(objs.ConfigMap.Data["jvm-server.options"], "-XX:-UseAESIntrinsics") {
		t.Error("JDK intrinsics stay on")
	}
	if !hasEnv(objs.StatefulSet.Spec.Template.Spec.Containers[0], "OPENSSL_ia32cap", NoAccelerationEnv["OPENSSL_ia32cap"]) {
		t.Error("OPENSSL_ia32cap is not set for the native engine")
	}
}

func hasEnv(c corev1.Container, name, value string) bool {
	for _, e := range c.Env {
		if e.Name == name && e.Value == value {
			return true
		}
	}
	return false
}

// A configuration change rolls the pods; the same configuration does not.
func TestConfigHashFollowsConfiguration(t *testing.T) {
	ds, enc := sampleDatastore(t, "secureddatastore-cassandra-tls13.yaml")
	a := build(t, ds, enc).StatefulSet.Spec.Template.Annotations[ConfigHashAnnotation]
	if b := build(t, ds, enc).StatefulSet.Spec.Template.Annotations[ConfigHashAnnotation]; a != b {
		t.Fatal("the hash is not deterministic")
	}
	enc.ClientToNode.CipherSuites = []string{"TLS_AES_256_GCM_SHA384"}
	if c := build(t, ds, enc).StatefulSet.Spec.Template.Annotations[ConfigHashAnnotation]; a == c {
		t.Error("a cipher suite change does not change the pod template")
	}
	step, err := AppliedStep(build(t, ds, enc).StatefulSet)
	if err != nil || step == nil || step.Encryption.ClientToNode.CipherSuites[0] != "TLS_AES_256_GCM_SHA384" {
		t.Errorf("the applied step does not round-trip: %+v %v", step, err)
	}
}

// A datastore that asks for its volumes to go with it gets the StatefulSet's Delete policy.
func TestVolumeClaimsGoWithTheDatastoreWhenAsked(t *testing.T) {
	ds, enc := sampleDatastore(t, "secureddatastore-cassandra-tls13.yaml")
	ds.Spec.Cassandra.Storage.WhenDeleted = v1alpha1.VolumeDelete
	if p := build(t, ds, enc).StatefulSet.Spec.PersistentVolumeClaimRetentionPolicy; *p != *podtemplate.Claims(v1alpha1.VolumeDelete) {
		t.Errorf("retention policy %+v; want %+v", p, podtemplate.Claims(v1alpha1.VolumeDelete))
	}
}

// A ring's roll waits after each restarted node until its peers and clients can have seen it
// again; a single node has nobody to wait for.
func TestRollsOfARingWaitForTheRestartedNodeToSettle(t *testing.T) {
	ds, enc := sampleDatastore(t, "secureddatastore-cassandra-tls13.yaml")
	for nodes, want := range map[int32]int32{1: 0, 3: RingSettleSeconds} {
		ds.Spec.Cassandra.Nodes = ptr.To(nodes)
		if got := build(t, ds, enc).StatefulSet.Spec.MinReadySeconds; got != want {
			t.Errorf("%d nodes: minReadySeconds %d; want %d", nodes, got, want)
		}
	}
}
