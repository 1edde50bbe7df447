package benchmark

import (
	"cmp"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/certs"
	"secured.dev/operator/internal/render/datakeys"
	"secured.dev/operator/internal/render/hbase"
	"secured.dev/operator/internal/render/podtemplate"
	"secured.dev/operator/internal/ycsb"
)

// HBaseTarget is how the JVM driver (drivers/ycsb-hbase) reaches an HBase datastore: k6 cannot
// speak Kerberos-secured HBase RPC, YCSB's own client with our binding can.
type HBaseTarget struct {
	// Properties go into the HBase client's configuration: the registry, Kerberos and SASL,
	// TLS.
	Properties map[string]string
	// Principal logs the client in with Keytab and Krb5 (the realm's krb5.conf), when the
	// cluster uses Kerberos.
	Principal    string
	Keytab, Krb5 *KeySource
	// Trust holds the CAs the client verifies the servers against, mounted as TrustFile in
	// hbase.PodLayout.TrustDir: the store Properties name, when the cluster speaks TLS.
	Trust     *KeySource
	TrustFile string
}

// Paths in the driver's pod and image (hack/kind/images.sh builds secured.dev/ycsb-hbase).
const (
	hbaseConf    = "/etc/hbase/conf"
	driverLib    = "/opt/ycsb-hbase/lib"
	keytabDir    = "/etc/secured/keytab"
	clientKeytab = keytabDir + "/" + hbase.ClientKeytab
	// externalTrustFile is the PEM bundle of an external cluster's CAs.
	externalTrustFile = "ca.crt"
)

func hbaseTarget(ds *v1alpha1.SecuredDatastore, clusterDomain string, enc *v1alpha1.EncryptionStatus) (Target, error) {
	c := hbase.TopologyOf(ds, clusterDomain)
	plan, err := hbase.Tunnel(ds, *enc.Effective, clusterDomain)
	if err != nil {
		return Target{}, fmt.Errorf("SecuredDatastore %s vpn: %w", ds.Name, err)
	}
	if plan != nil {
		// The clients join the tunnel and reach every server at its tunnel address.
		c = c.InTunnel(*plan)
	}
	t := Target{Datastore: ds.Name, Profile: enc.Profile, Tunnel: plan, HBase: &HBaseTarget{Properties: hbase.ClientProperties(c, *enc.Effective)}}
	if level := t.HBase.Properties["hbase.rpc.protection"]; level != "" {
		// The datastore's level may change live while the benchmark runs.
		t.HBase.Properties["hbase.rpc.protection"] = hbase.ClientLevels(level)
	}
	t.Hosts = c.Bootstrap
	if enc.Effective.HBase != nil && enc.Effective.HBase.Authentication == v1alpha1.AuthenticationKerberos {
		t.HBase.Principal = hbase.ClientPrincipal(ds)
		t.HBase.Keytab = &KeySource{Secret: hbase.NamesOf(ds).ClientKeytabSecret(), Key: hbase.ClientKeytab}
		t.HBase.Krb5 = &KeySource{ConfigMap: hbase.NamesOf(ds).ConfigMap(), Key: "krb5.conf"}
	}
	if enc.Effective.ClientToNode.Mode != v1alpha1.ChannelDisabled {
		t.HBase.Trust = &KeySource{ConfigMap: certs.TrustConfigMap(ds), Key: certs.TrustStoreKey}
		t.HBase.TrustFile = certs.TrustStoreKey
	}
	if a := enc.Effective.AtRest; a != nil && a.Engine != nil {
		// HBase encrypts only the HFiles of column families created encrypted.
		t.HBase.Properties["columnfamily.encryption"] = "AES"
	}
	if cs := enc.Effective.ClientSide; cs != nil {
		t.ClientSide, t.ClientKeysSecret = cs, datakeys.ClientKeysSecret(ds)
	}
	return t, nil
}

// externalHBase is an HBase the operator does not manage, reached with the same client
// properties as a managed one's (hbase.ClientProperties) from what the spec says of it: a
// Kerberos login at one SASL level, TLS pinned to one protocol and suite, and the registry.
func externalHBase(e *v1alpha1.ExternalTarget) Target {
	h := ptr.Deref(e.HBase, v1alpha1.ExternalHBase{})
	enc := v1alpha1.EffectiveEncryption{ClientToNode: v1alpha1.EffectiveChannel{Mode: v1alpha1.ChannelDisabled}}
	c := hbase.Topology{Bootstrap: e.Endpoints}
	t := Target{Hosts: e.Endpoints, Profile: "external", HBase: &HBaseTarget{}}
	k := h.Kerberos
	if k != nil {
		_, c.Realm, _ = strings.Cut(k.Principal, "@")
		enc.HBase = &v1alpha1.HBaseSecurity{Authentication: v1alpha1.AuthenticationKerberos,
			HBaseRPCProtection: cmp.Or(k.RPCProtection, v1alpha1.ProtectionPrivacy), AESTransform: ptr.To(ptr.Deref(k.AESTransform, false))}
		t.HBase.Principal = k.Principal
		t.HBase.Keytab = &KeySource{Secret: k.KeytabSecretRef.Name, Key: k.KeytabSecretRef.Key}
		t.HBase.Krb5 = &KeySource{ConfigMap: k.Krb5ConfigMapRef.Name, Key: k.Krb5ConfigMapRef.Key}
	}
	if tls := e.TLS; tls != nil {
		enc.ClientToNode = v1alpha1.EffectiveChannel{Mode: v1alpha1.ChannelRequired,
			Protocols: []v1alpha1.TLSProtocol{tls.Protocol}, CipherSuites: []string{string(tls.CipherSuite)}}
	}
	p := hbase.ClientProperties(c, enc)
	if k != nil && k.ServerPrincipal != "" {
		p["hbase.master.kerberos.principal"], p["hbase.regionserver.kerberos.principal"] = k.ServerPrincipal, k.ServerPrincipal
	}
	if tls := e.TLS; tls != nil {
		if ref := tls.CASecretRef; ref != nil {
			t.HBase.Trust, t.HBase.TrustFile = &KeySource{Secret: ref.Name, Key: ref.Key}, externalTrustFile
			p["hbase.rpc.tls.truststore.location"] = hbase.PodLayout.TrustDir + "/" + externalTrustFile
			p["hbase.rpc.tls.truststore.type"] = "PEM"
		} else {
			// Without a CA, the JDK's own trust decides.
			delete(p, "hbase.rpc.tls.truststore.location")
			delete(p, "hbase.rpc.tls.truststore.type")
		}
	}
	if h.Registry == v1alpha1.RegistryZooKeeper {
		delete(p, "hbase.client.bootstrap.servers")
		p["hbase.client.registry.impl"] = "org.apache.hadoop.hbase.client.ZKConnectionRegistry"
		p["hbase.zookeeper.quorum"] = strings.Join(e.Endpoints, ",")
		p["zookeeper.znode.parent"] = cmp.Or(h.ZNodeParent, "/hbase")
	}
	t.HBase.Properties = p
	return t
}

// driverProperties are the YCSB properties of a Job: the workload (YCSB's own names, from the
// same definitions the k6 extension uses), the client's configuration and the summary.
func driverProperties(j Job) (map[string]string, error) {
	b, w := j.Benchmark, j.Benchmark.Spec.Workload
	preset := string(w.Preset)
	if preset == "" {
		preset = "A" // the proportions below replace its mix
	}
	wl, err := ycsb.Core(preset)
	if err != nil {
		return nil, err
	}
	wl.RecordCount = ptr.Deref(w.RecordCount, DefaultRecordCount)
	if w.FieldCount != nil {
		wl.FieldCount = int(*w.FieldCount)
	}
	if w.FieldLength != nil {
		wl.FieldLength = int(*w.FieldLength)
	}
	if w.RequestDistribution != "" {
		wl.RequestDistribution = string(w.RequestDistribution)
	}
	if p := w.Proportions; p != nil {
		wl.Proportions = map[ycsb.Operation]float64{ycsb.Read: float64(p.Read) / 100, ycsb.Update: float64(p.Update) / 100,
			ycsb.Insert: float64(p.Insert) / 100, ycsb.Scan: float64(p.Scan) / 100, ycsb.ReadModifyWrite: float64(p.ReadModifyWrite) / 100}
	}
	pods := int64(ClientPods(b))
	props := wl.Properties()
	if w.Table != "" {
		props["table"] = w.Table
	}
	if j.Phase == PhaseRun {
		// The warm-up and the measured window are the driver's (GatedWorkload), which ends the
		// threads when the window is over: YCSB caps its threads at the operation count (0
		// would start none), so that is the largest it parses, and its maxexecutiontime only
		// bounds a run that outlasts the window's longest.
		props["workload"] = "dev.secured.ycsb.GatedWorkload"
		props["operationcount"] = strconv.Itoa(math.MaxInt32)
		if sw := untilSteady(j); sw != nil {
			props["warmup.min"], props["warmup.max"] = seconds(sw.Minimum.Duration), seconds(sw.Maximum.Duration)
		} else {
			props["warmup.seconds"] = seconds(warmUp(b))
		}
		if w.OperationCount != nil {
			props["window.operations"] = strconv.FormatInt(max(*w.OperationCount/pods, 1), 10)
		} else {
			props["window.seconds"] = seconds(duration(b))
			props["maxexecutiontime"] = seconds(longestWarmUp(j) + duration(b) + time.Minute)
		}
	} else {
		props["createtable"] = "true"
	}
	for k, v := range j.Target.HBase.Properties {
		props[k] = v
	}
	if cs := j.Target.ClientSide; cs != nil {
		c, _, sig := ClientSideAlgorithms(*cs)
		props["clientside.cipher"], props["clientside.signature"], props["clientside.keydir"] = c.String(), sig.String(), clientKeysMount
		if cs.Fields != nil {
			props["clientside.fields"] = strconv.Itoa(int(*cs.Fields))
		}
	}
	if verifiesWrites(j) {
		props["writehistory"], props["verifywrites"] = historyMount+"/history", "true"
	}
	props["exporter"] = "dev.secured.ycsb.SummaryExporter"
	props["exportfile"] = corev1.TerminationMessagePathDefault
	props["hdrhistogram.percentiles"] = "50,95,99"
	props["profile"] = j.Target.Profile
	if j.Target.HBase.Principal != "" {
		props["principal"], props["keytab"] = j.Target.HBase.Principal, clientKeytab
	}
	if j.RemoteWriteURL != "" {
		props["prometheus.remotewrite.url"] = j.RemoteWriteURL
		props["prometheus.tags"] = strings.Join(tags(j), ",")
	}
	return props, nil
}

// driverCommand runs YCSB's client. A shell computes each pod's share of the load phase from
// the Indexed Job's completion index (YCSB's insertstart and insertcount), so the script text
// holds only the operator's constants and numbers: the properties, which carry strings from
// the spec and the datastore, reach java as the shell's positional arguments ("$@"), never as
// script text, and with every $ doubled so the kubelet's $(VAR) expansion leaves them as they
// are.
func driverCommand(j Job, props map[string]string) []string {
	b := j.Benchmark
	java := []string{"exec", "java", "-Xmx1g", "-XX:-UsePerfData"}
	if j.Target.HBase.Principal != "" {
		java = append(java, "-Djava.security.krb5.conf="+hbaseConf+"/krb5.conf")
	}
	java = append(java, hbase.JDK17Options...)
	java = append(java, "-cp", "'"+driverLib+"/*:"+driverLib+"/lib/*'", "site.ycsb.Client", map[string]string{PhaseLoad: "-load", PhaseRun: "-t"}[j.Phase],
		"-db", "dev.secured.ycsb.HBaseClient", "-threads", strconv.Itoa(int(ptr.Deref(b.Spec.Load.VirtualUsers, DefaultVirtualUsers))))
	pods := int64(ClientPods(b))
	if j.Phase == PhaseRun && b.Spec.Load.Mode == v1alpha1.LoadFixedRate && b.Spec.Load.Rate != nil {
		java = append(java, "-target", strconv.FormatInt(max(*b.Spec.Load.Rate/pods, 1), 10))
	}
	java = append(java, `"$@"`)
	if j.Phase == PhaseLoad {
		share := (ptr.Deref(b.Spec.Workload.RecordCount, DefaultRecordCount) + pods - 1) / pods
		java = append(java, "-p", fmt.Sprintf("insertstart=$((JOB_COMPLETION_INDEX * %d))", share), "-p", fmt.Sprintf("insertcount=%d", share))
	}
	cmd := []string{"sh", "-c", strings.Join(java, " "), "ycsb"}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		cmd = append(cmd, "-p", literal(k+"="+props[k]))
	}
	return cmd
}

// hbaseVolumes: krb5.conf and the client's keytab, the trust store, scratch space.
func hbaseVolumes(t *HBaseTarget) ([]corev1.Volume, []corev1.VolumeMount) {
	vols := []corev1.Volume{podtemplate.EmptyDirVolume("tmp")}
	mounts := []corev1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}}
	mount := func(k *KeySource, name, dir, file string) {
		if k != nil {
			vols = append(vols, k.volume(name, file))
			mounts = append(mounts, corev1.VolumeMount{Name: name, MountPath: dir, ReadOnly: true})
		}
	}
	mount(t.Krb5, "krb5", hbaseConf, "krb5.conf")
	mount(t.Keytab, "keytab", keytabDir, hbase.ClientKeytab)
	mount(t.Trust, "trust", hbase.PodLayout.TrustDir, t.TrustFile)
	return vols, mounts
}

// seconds is a duration in whole seconds, rounded up, as the driver's properties take it.
func seconds(d time.Duration) string {
	return strconv.FormatInt(int64(math.Ceil(d.Seconds())), 10)
}
