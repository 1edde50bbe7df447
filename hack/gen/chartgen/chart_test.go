package main

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"secured.dev/operator/internal/test/chart"
	"secured.dev/operator/internal/test/tier"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"secured.dev/operator/internal/test/samples"
)

func TestChartLints(t *testing.T) {
	tier.Full(t, "helm")
	if out, err := chart.Helm(t, "lint", "--strict", "charts/secured-datastore-operator", "--kube-version", "1.36.3"); err != nil {
		t.Fatalf("helm lint: %v\n%s", err, out)
	}
}

// Defaults: CRDs kept on uninstall, the shipped profiles, the labeller, Secrets only in the datastore
// namespaces, and a restricted operator pod.
func TestChartDefaults(t *testing.T) {
	tier.Full(t, "helm")
	objs := chart.Render(t)
	if n := len(objs["CustomResourceDefinition"]); n != 4 {
		t.Errorf("%d CRDs, want 4", n)
	}
	for _, crd := range objs["CustomResourceDefinition"] {
		if crd.GetAnnotations()["helm.sh/resource-policy"] != "keep" {
			t.Errorf("CRD %s lacks the keep policy", crd.GetName())
		}
	}
	// Helm cannot create custom resources in the release that installs their CRDs: the
	// shipped profiles are a ConfigMap the operator mounts and applies, byte for byte the samples.
	if n := len(objs["EncryptionProfile"]); n != 0 {
		t.Errorf("%d EncryptionProfiles in the release: a fresh install cannot map them", n)
	}
	var dashboards []corev1.ConfigMap
	for _, u := range objs["ConfigMap"] {
		cm := chart.As[corev1.ConfigMap](t, u)
		if !strings.HasSuffix(cm.Name, "-profiles") {
			dashboards = append(dashboards, cm)
			continue
		}
		want, err := samples.Profiles()
		if err != nil {
			t.Fatal(err)
		}
		if len(cm.Data) != len(want) || len(want) != 18 {
			t.Errorf("the shipped profiles ConfigMap has %d profiles; want the 18 of config/samples/profiles", len(cm.Data))
		}
		for key, data := range cm.Data {
			src, err := os.ReadFile(filepath.Join(samples.ProfilesDir(), key))
			if err != nil || strings.TrimRight(string(src), "\n") != strings.TrimRight(data, "\n") {
				t.Errorf("shipped profile %s differs from config/samples/profiles/%s (%v)", key, key, err)
			}
		}
	}
	dep := chart.As[appsv1.Deployment](t, objs["Deployment"][0])
	volumes := map[string]corev1.VolumeSource{}
	for _, v := range dep.Spec.Template.Spec.Volumes {
		volumes[v.Name] = v.VolumeSource
	}
	args := dep.Spec.Template.Spec.Containers[0].Args
	if p := volumes["profiles"].ConfigMap; !slices.Contains(args, "--shipped-profiles=/etc/secured-datastore-operator/profiles") ||
		p == nil || !strings.HasSuffix(p.Name, "-secured-datastore-operator-profiles") {
		t.Errorf("the operator does not mount and apply the shipped profiles: args %v, volumes %+v", args, volumes)
	}
	// The key server's certificate: a Secret of the chart, mounted, its host the Service's.
	keys := chart.As[corev1.Secret](t, objs["Secret"][0])
	block, _ := pem.Decode(keys.Data[corev1.TLSCertKey])
	if block == nil {
		t.Fatalf("Secret %s holds no certificate", keys.Name)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	host := chart.Release + "-secured-datastore-operator-tunnel-keys." + chart.Namespace + ".svc"
	if v := volumes["tunnel-keys"].Secret; v == nil || v.SecretName != keys.Name || cert.VerifyHostname(host) != nil ||
		!slices.Contains(args, "--tunnel-keys-url=https://"+host+":9444/v1/tunnel-key") || !slices.Contains(args, "--tunnel-keys-cert-dir=/etc/secured-datastore-operator/tunnel-keys") {
		t.Errorf("the tunnel key server is not set up: args %v, volumes %+v, certificate for %v", args, volumes, cert.DNSNames)
	}
	if len(objs["DaemonSet"]) != 1 {
		t.Error("the crypto labeller is on by default")
	}
	// The dashboards, byte for byte, labelled for Grafana's sidecar.
	if n := len(dashboards); n != 3 {
		t.Errorf("%d dashboard ConfigMaps, want 3", n)
	}
	for _, cm := range dashboards {
		if cm.Labels["grafana_dashboard"] != "1" || len(cm.Data) != 1 {
			t.Errorf("ConfigMap %s: labels %v, %d keys", cm.Name, cm.Labels, len(cm.Data))
		}
		for key, data := range cm.Data {
			want, err := os.ReadFile(filepath.Join(samples.RepoRoot(), "dashboards", key))
			if err != nil || strings.TrimSpace(string(want)) != data {
				t.Errorf("ConfigMap %s key %s differs from dashboards/%s (%v)", cm.Name, key, key, err)
			}
		}
	}
	// Two replicas on different nodes, one kept through drains: the standby takes the lease.
	if *dep.Spec.Replicas != 2 || dep.Spec.Template.Spec.Affinity == nil || dep.Spec.Template.Spec.Affinity.PodAntiAffinity == nil ||
		len(objs["PodDisruptionBudget"]) != 1 {
		t.Errorf("replicas %d, affinity %+v, %d PDBs; want 2 spread replicas and a PDB", *dep.Spec.Replicas, dep.Spec.Template.Spec.Affinity, len(objs["PodDisruptionBudget"]))
	}
	if args := dep.Spec.Template.Spec.Containers[0].Args; !slices.Contains(args, "--watch-namespaces=default") {
		t.Errorf("args %v: the operator should watch the namespaces it has Roles in", args)
	}

	pod := dep.Spec.Template.Spec
	if pod.SecurityContext == nil || pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot ||
		pod.SecurityContext.SeccompProfile == nil || pod.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("operator pod is not restricted: %+v", pod.SecurityContext)
	}
	c := pod.Containers[0]
	sc := c.SecurityContext
	if sc == nil || *sc.AllowPrivilegeEscalation || !*sc.ReadOnlyRootFilesystem || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("operator container is not restricted: %+v", sc)
	}
	if !slices.Contains(c.Args, "--leader-elect") || slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--prometheus-remote-write-url") }) {
		t.Errorf("args %v: want leader election and no remote write by default", c.Args)
	}
}

// Every value changes what it says.
func TestChartValues(t *testing.T) {
	tier.Full(t, "helm")
	objs := chart.Render(t, "watch.allNamespaces=true", "crds.keep=false", "cryptoLabeller.enabled=false",
		"metrics.serviceMonitor.enabled=true", "metrics.serviceMonitor.labels.release=kps",
		"prometheus.remoteWriteURL=http://prometheus.monitoring.svc:9090/api/v1/write", "leaderElection.enabled=false", "replicaCount=1")
	if len(objs["Role"]) != 0 {
		t.Error("watch.allNamespaces with leader election off still renders Roles")
	}
	for _, u := range objs["CustomResourceDefinition"] {
		if _, ok := u.GetAnnotations()["helm.sh/resource-policy"]; ok {
			t.Errorf("CRD %s keeps despite crds.keep=false", u.GetName())
		}
	}
	if len(objs["DaemonSet"]) != 0 {
		t.Error("cryptoLabeller.enabled=false still renders the DaemonSet")
	}
	if sm := objs["ServiceMonitor"]; len(sm) != 1 || sm[0].GetLabels()["release"] != "kps" {
		t.Errorf("ServiceMonitor %v", sm)
	}
	args := chart.As[appsv1.Deployment](t, objs["Deployment"][0]).Spec.Template.Spec.Containers[0].Args
	if !slices.Contains(args, "--prometheus-remote-write-url=http://prometheus.monitoring.svc:9090/api/v1/write") || slices.Contains(args, "--leader-elect") ||
		slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--watch-namespaces") }) {
		t.Errorf("args %v", args)
	}
	none := chart.Render(t, "crds.enabled=false", "profiles.install=false", "dashboards.enabled=false")
	if len(none["CustomResourceDefinition"])+len(none["ConfigMap"]) != 0 ||
		slices.ContainsFunc(chart.As[appsv1.Deployment](t, none["Deployment"][0]).Spec.Template.Spec.Containers[0].Args, func(a string) bool { return strings.HasPrefix(a, "--shipped-profiles") }) {
		t.Error("crds.enabled=false / profiles.install=false / dashboards.enabled=false still render them")
	}
}

// values.schema.json refuses mistakes with the field's path.
func TestChartSchemaRefusesBadValues(t *testing.T) {
	tier.Full(t, "helm")
	for set, want := range map[string]string{
		"bogus=1":                              "additional properties 'bogus' not allowed",
		"replicaCount=0":                       "/replicaCount': minimum: got 0, want 1",
		"prometheus.remoteWriteURL=ftp://x":    "/prometheus/remoteWriteURL",
		"watch.namespaces={Bad_NS}":            "/watch/namespaces/0",
		"watch.namespaces={}":                  "/watch/namespaces",
		"image.pullPolicy=Sometimes":           "/image/pullPolicy",
		"metrics.serviceMonitor.interval=soon": "/metrics/serviceMonitor/interval",
		"leaderElection.enabled=false":         "replicaCount above 1 needs leaderElection.enabled",
	} {
		out, err := chart.Helm(t, "template", "rel", "charts/secured-datastore-operator", "--kube-version", "1.36.3", "--set", set)
		if err == nil || !strings.Contains(out, want) {
			t.Errorf("--set %s: %v, output should name %q:\n%s", set, err, want, out)
		}
	}
}
