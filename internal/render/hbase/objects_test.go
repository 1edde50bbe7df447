package hbase

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	psapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/crypto"
	"secured.dev/operator/internal/render/datakeys"
	"secured.dev/operator/internal/render/podtemplate"
	"secured.dev/operator/internal/render/vpn"
	"secured.dev/operator/internal/test/golden"
	"secured.dev/operator/internal/test/samples"
)

func sampleDatastore(t *testing.T) (*v1alpha1.SecuredDatastore, v1alpha1.EffectiveEncryption) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(samples.RepoRoot(), "config", "samples", "secureddatastore-hbase-kerberos.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ds := &v1alpha1.SecuredDatastore{}
	if err := yaml.UnmarshalStrict(b, ds); err != nil {
		t.Fatal(err)
	}
	ds.Namespace = "db"
	p, err := samples.Profile(ds.Spec.Encryption.ProfileRef)
	if err != nil {
		t.Fatal(err)
	}
	res, errs := crypto.Resolve(&p.Spec.EncryptionSettings, nil, v1alpha1.EngineHBase, field.NewPath("spec", "encryption"))
	if len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	return ds, res.Effective
}

func clusterOf(ds *v1alpha1.SecuredDatastore, enc v1alpha1.EffectiveEncryption) Cluster {
	return Cluster{Datastore: ds, Encryption: enc, Image: "secured.dev/hbase:2.6.4", KDCImage: "secured.dev/kdc:2.0.3", ClusterDomain: "cluster.local",
		CertSecret: "events-tls", KeystorePasswordSecret: "events-keystore-password", TrustConfigMap: "events-trust"}
}

// The sample Kerberos datastore renders to golden objects: a KDC, ZooKeeper, HDFS and HBase.
func TestSampleDatastoreObjects(t *testing.T) {
	ds, enc := sampleDatastore(t)
	objs, err := Build(clusterOf(ds, enc))
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "events.objects.yaml", golden.YAML(t, objs.All()))
	if len(objs.StatefulSets) != 6 {
		t.Errorf("%d StatefulSets; want KDC, ZooKeeper, NameNode, DataNode, Master, RegionServer", len(objs.StatefulSets))
	}
}

// Every pod runs under the Pod Security Standard "restricted".
func TestPodsAreRestricted(t *testing.T) {
	ds, enc := sampleDatastore(t)
	objs, err := Build(clusterOf(ds, enc))
	if err != nil {
		t.Fatal(err)
	}
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	level := psapi.LevelVersion{Level: psapi.LevelRestricted, Version: psapi.LatestVersion()}
	for _, sts := range objs.StatefulSets {
		for _, r := range evaluator.EvaluatePod(level, &sts.Spec.Template.ObjectMeta, &sts.Spec.Template.Spec) {
			if !r.Allowed {
				t.Errorf("%s: restricted: %s: %s", sts.Name, r.ForbiddenReason, r.ForbiddenDetail)
			}
		}
	}
}

// One principal per service and pod, named by the pod's stable DNS name.
func TestPrincipalsNamePods(t *testing.T) {
	ds, _ := sampleDatastore(t)
	p := Principals(ds, "cluster.local")
	if got := p[RegionServer]; len(got) != 3 || got[2] != "hbase/events-rs-2.events-rs.db.svc.cluster.local@EVENTS.DB" {
		t.Errorf("RegionServer principals %v", got)
	}
	if got := p[NameNode]; len(got) != 2 || !strings.HasPrefix(got[1], "HTTP/events-nn-0.") {
		t.Errorf("NameNode principals %v: want nn and HTTP (SPNEGO for HTTPS)", got)
	}
	if got := p[ZooKeeper]; len(got) != 1 || got[0] != "zookeeper/events-zk-0.events-zk.db.svc.cluster.local@EVENTS.DB" {
		t.Errorf("ZooKeeper principals %v: want zookeeper/<pod host>, the name its clients ask for", got)
	}
}

// With spec.hbase.masters, the backup Masters are pods of the Master's StatefulSet: each has its
// principal, and clients bootstrap from every Master, so the failover needs no new configuration.
func TestBackupMastersAreKnownToClientsAndTheKDC(t *testing.T) {
	ds, enc := sampleDatastore(t)
	ds.Spec.HBase.Masters = ptr.To[int32](2)
	objs, err := Build(clusterOf(ds, enc))
	if err != nil {
		t.Fatal(err)
	}
	for _, sts := range objs.StatefulSets {
		if sts.Name == "events-master" && ptr.Deref(sts.Spec.Replicas, 0) != 2 {
			t.Errorf("the Master's StatefulSet has %d replicas; want 2", ptr.Deref(sts.Spec.Replicas, 0))
		}
	}
	if got := Principals(ds, "cluster.local")[Master]; len(got) != 2 || got[1] != "hbase/events-master-1.events-master.db.svc.cluster.local@EVENTS.DB" {
		t.Errorf("Master principals %v; want one per Master pod", got)
	}
	boot := strings.Join(TopologyOf(ds, "cluster.local").Bootstrap, ",")
	for _, want := range []string{"events-master-0.events-master.db.svc.cluster.local:16000", "events-master-1.events-master.db.svc.cluster.local:16000"} {
		if !strings.Contains(boot, want) {
			t.Errorf("clients bootstrap from %s; want %s among them", boot, want)
		}
	}
}

func TestCertificatesAreRequiredForSecureHDFS(t *testing.T) {
	ds, enc := sampleDatastore(t)
	s := clusterOf(ds, enc)
	s.CertSecret = ""
	if _, err := Build(s); err == nil || !strings.Contains(err.Error(), "certificate Secret") {
		t.Errorf("Kerberos without certificates: %v", err)
	}
}

// Every Secret a pod mounts is one the operator creates (or cert-manager issues): a missing one
// keeps the pod in ContainerCreating forever.
func TestPodsMountOnlySecretsThatExist(t *testing.T) {
	ds, enc := sampleDatastore(t)
	s := clusterOf(ds, enc)
	objs, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	secrets, err := Identities(ds, s.ClusterDomain, Keys{}, KeepKeys, counter())
	if err != nil {
		t.Fatal(err)
	}
	exists := map[string]bool{s.CertSecret: true, s.KeystorePasswordSecret: true}
	for _, sec := range secrets {
		exists[sec.Name] = true
	}
	for _, sts := range objs.StatefulSets {
		for _, v := range sts.Spec.Template.Spec.Volumes {
			if v.Secret != nil && !exists[v.Secret.SecretName] {
				t.Errorf("%s mounts Secret %s, which nobody creates", sts.Name, v.Secret.SecretName)
			}
		}
		for _, e := range sts.Spec.Template.Spec.Containers[0].Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && !exists[e.ValueFrom.SecretKeyRef.Name] {
				t.Errorf("%s reads Secret %s, which nobody creates", sts.Name, e.ValueFrom.SecretKeyRef.Name)
			}
		}
	}
}

// Every rendered file is read by some role, so changing it restarts somebody; a file nobody
// is listed as reading would change silently.
func TestEveryFileRestartsTheRolesThatReadIt(t *testing.T) {
	files, err := Files(topology, resolve(t, &v1alpha1.EncryptionSettings{HBase: &v1alpha1.HBaseSecurity{Authentication: v1alpha1.AuthenticationKerberos}}))
	if err != nil {
		t.Fatal(err)
	}
	for name := range files {
		readers := 0
		for _, r := range Roles {
			if slices.Contains(filesRead[r], name) {
				readers++
			}
		}
		if readers == 0 {
			t.Errorf("no role reads %s: add it to filesRead", name)
		}
	}
}

// A datastore that asks for its volumes to go with it gets the Delete policy on every role: the
// NameNode's and ZooKeeper's metadata are as much its data as the DataNodes' blocks.
func TestVolumeClaimsGoWithTheDatastoreWhenAsked(t *testing.T) {
	ds, enc := sampleDatastore(t)
	ds.Spec.HBase.Storage.WhenDeleted = v1alpha1.VolumeDelete
	objs, err := Build(clusterOf(ds, enc))
	if err != nil {
		t.Fatal(err)
	}
	for _, sts := range objs.StatefulSets {
		if p := sts.Spec.PersistentVolumeClaimRetentionPolicy; *p != *podtemplate.Claims(v1alpha1.VolumeDelete) {
			t.Errorf("StatefulSet %s: retention policy %+v; want %+v", sts.Name, p, podtemplate.Claims(v1alpha1.VolumeDelete))
		}
	}
}

// An encrypted volume (atRest.volume) on HBase: each DataNode's init container encrypts the
// directory its blocks go to (dfs.datanode.data.dir) before the DataNode starts, with the volume
// key that it alone sees; the other roles, which hold names and metadata, have none.
func TestDataNodesEncryptTheirBlocksDirectory(t *testing.T) {
	ds, enc := sampleDatastore(t)
	enc.AtRest = &v1alpha1.AtRestEncryption{Volume: &v1alpha1.VolumeAtRest{Method: v1alpha1.VolumeFscrypt}}
	c := clusterOf(ds, enc)
	c.AtRestSecret, c.VolumeEncryptionImage = "events-at-rest-keys", "secured.dev/volume-encryption:test"
	objs, err := Build(c)
	if err != nil {
		t.Fatal(err)
	}
	if hdfs := objs.RoleConfigMaps[DataNode].Data["hdfs-site.xml"]; !strings.Contains(hdfs, "<name>dfs.datanode.data.dir</name><value>file://"+DataNodeDir+"</value>") {
		t.Fatalf("the DataNode keeps its blocks elsewhere than %s:\n%s", DataNodeDir, hdfs)
	}
	for _, sts := range objs.StatefulSets {
		pod := sts.Spec.Template.Spec
		role := Role(sts.Labels["app.kubernetes.io/component"])
		if role != DataNode {
			if len(pod.InitContainers) > 0 || podtemplate.VolumeSecret(pod, datakeys.VolumeKeyVolume) != "" {
				t.Errorf("%s: init containers %v, volume key %q", sts.Name, pod.InitContainers, podtemplate.VolumeSecret(pod, datakeys.VolumeKeyVolume))
			}
			continue
		}
		if len(pod.InitContainers) != 1 || pod.InitContainers[0].Name != podtemplate.VolumeEncryptionContainer ||
			!slices.Contains(pod.InitContainers[0].Args, "--dir="+DataNodeDir) || podtemplate.VolumeSecret(pod, datakeys.VolumeKeyVolume) != c.AtRestSecret {
			t.Errorf("%s: init containers %+v, volume key from %q", sts.Name, pod.InitContainers, podtemplate.VolumeSecret(pod, datakeys.VolumeKeyVolume))
		}
		for _, m := range pod.Containers[0].VolumeMounts {
			if m.Name == datakeys.VolumeKeyVolume {
				t.Errorf("the DataNode process sees the volume key")
			}
		}
	}
}

// The sample datastore in the shipped OpenVPN profile's tunnel renders to golden objects: every
// role but the KDC runs the sidecar, takes its tunnel address from the address table as its
// name and bind address, and is named by it in every file; probes dial it inside the pod.
func TestTunnelledDatastoreObjects(t *testing.T) {
	ds, _ := sampleDatastore(t)
	p, err := samples.Profile("openvpn")
	if err != nil {
		t.Fatal(err)
	}
	res, errs := crypto.Resolve(&p.Spec.EncryptionSettings, nil, v1alpha1.EngineHBase, field.NewPath("spec", "encryption"))
	if len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	plan, err := Tunnel(ds, res.Effective, "cluster.local")
	if err != nil || plan == nil {
		t.Fatalf("tunnel plan: %v, %v", plan, err)
	}
	c := clusterOf(ds, res.Effective)
	c.Tunnel, c.KeyServer = plan, vpn.KeyServer{URL: "https://tunnel-keys.secured-system.svc:8443/keys"}
	if _, err := Build(c); err == nil || !strings.Contains(err.Error(), "no sidecar image") {
		t.Errorf("a tunnel without a sidecar image: %v", err)
	}
	c.VPNImage = "secured.dev/vpn:test"
	objs, err := Build(c)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "events-openvpn.objects.yaml", golden.YAML(t, objs.All()))

	if got, want := len(plan.Nodes()), 1+1+3+2+3; got != want { // ZooKeeper, NameNode, DataNodes, Masters, RegionServers
		t.Errorf("%d members in the tunnel; want every pod of every role but the KDC (%d)", got, want)
	}
	site := objs.ConfigMap.Data["hbase-site.xml"]
	if !strings.Contains(site, "<name>hbase.zookeeper.quorum</name><value>100.80.0.1</value>") || strings.Contains(site, ".svc.cluster.local") {
		t.Errorf("hbase-site.xml does not name the servers by their tunnel addresses:\n%s", site)
	}
	for _, sts := range objs.StatefulSets {
		pod := sts.Spec.Template.Spec
		main := pod.Containers[0]
		if !strings.HasPrefix(main.Command[2], tunnelStart) {
			t.Errorf("%s does not start by taking its tunnel address: %q", sts.Name, main.Command[2])
		}
		if len(pod.InitContainers) == 0 || pod.InitContainers[len(pod.InitContainers)-1].Name != "vpn" {
			t.Errorf("%s has no tunnel sidecar", sts.Name)
		}
		if main.StartupProbe.Exec == nil || main.ReadinessProbe.Exec == nil || main.LivenessProbe.Exec == nil {
			t.Errorf("%s probes its pod address, where nothing listens: %+v", sts.Name, main.StartupProbe.ProbeHandler)
		}
	}
	if zk := objs.StatefulSets[0].Spec.Template.Spec.Containers[0].Command[2]; !strings.Contains(zk, `echo "clientPortAddress=$SD_HOST"`) || !strings.HasSuffix(zk, "/tmp/zoo.cfg") {
		t.Errorf("ZooKeeper does not bind its client port to its tunnel address: %s", zk)
	}
	var tunnelRule bool
	for _, rule := range objs.NetworkPolicy.Spec.Ingress {
		tunnelRule = tunnelRule || len(rule.Ports) == 1 && *rule.Ports[0].Protocol == "UDP" && len(rule.From) > 0
	}
	if !tunnelRule {
		t.Errorf("the NetworkPolicy admits no tunnel traffic, or from anyone: %+v", objs.NetworkPolicy.Spec.Ingress)
	}
}
