package cassandra

import (
	"strings"
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/certs"
)

// Where the client channel demands certificates, the superuser and the clients get theirs,
// named by SPIFFE IDs; the nodes authenticate by them only once both identities are mapped
// (status.identities) and only on a channel every client must take with TLS.
func TestCertificateLoginsFollowTheMappedIdentities(t *testing.T) {
	ds, enc := sampleDatastore(t, "secureddatastore-cassandra-tls13.yaml")
	if got := Certificates(ds, "cluster.local", Target(enc)).Clients; got != nil {
		t.Fatalf("client certificates %v for a channel that demands none", got)
	}
	without := Target(enc)
	enc.ClientToNode.ClientAuth = v1alpha1.ClientAuthRequired
	if got := Certificates(ds, "cluster.local", without, Target(enc)).Clients; len(got) != 2 {
		t.Errorf("a change toward client certificates issues %d client certificates; want both from its start", len(got))
	}
	req := Certificates(ds, "cluster.local", Target(enc))
	objs, err := certs.Build(req)
	if err != nil {
		t.Fatal(err)
	}
	uris := map[string][]string{}
	for _, o := range objs {
		if c, ok := o.(*cmv1.Certificate); ok && len(c.Spec.URIs) > 0 {
			uris[c.Spec.SecretName] = c.Spec.URIs
		}
	}
	want := map[string][]string{
		ds.Name + "-superuser-tls": {"spiffe://cluster.local/ns/shop/secureddatastore/" + ds.Name + "/role/sdo_admin"},
		ds.Name + "-client-tls":    {"spiffe://cluster.local/ns/shop/secureddatastore/" + ds.Name + "/role/sdo_client"},
	}
	if len(uris) != 2 || uris[ds.Name+"-superuser-tls"][0] != want[ds.Name+"-superuser-tls"][0] || uris[ds.Name+"-client-tls"][0] != want[ds.Name+"-client-tls"][0] {
		t.Fatalf("client certificates %v; want %v", uris, want)
	}

	authenticator := func(mapped bool, mode v1alpha1.ChannelMode) string {
		t.Helper()
		e := enc
		e.ClientToNode.Mode = mode
		d := ds.DeepCopy()
		if mapped {
			d.Status.Identities = Identities(d, "cluster.local")
		}
		cm := build(t, d, e).ConfigMap.Data["cassandra.yaml"]
		i := strings.Index(cm, "authenticator:")
		return strings.Fields(cm[i+len("authenticator:"):])[0]
	}
	if got := authenticator(false, v1alpha1.ChannelRequired); got != "PasswordAuthenticator" {
		t.Errorf("before the identities are mapped: %s; want PasswordAuthenticator (the default superuser has no certificate)", got)
	}
	if got := authenticator(true, v1alpha1.ChannelRequired); got != "class_name:" {
		t.Errorf("once mapped: %s; want MutualTlsAuthenticator as a parameterized class", got)
	}
	if got := authenticator(true, v1alpha1.ChannelOptional); got != "PasswordAuthenticator" {
		t.Errorf("on an Optional channel, where plaintext clients have no certificate: %s; want PasswordAuthenticator", got)
	}
	if _, err := Config(Topology{PasswordAuthentication: true, CertificateAuthentication: true, Seeds: []string{"a"}}, Step{}); err == nil ||
		!strings.Contains(err.Error(), "tls.clientAuth Required") {
		t.Errorf("certificate authentication without client certificates: %v; want a refusal naming clientAuth", err)
	}
	if _, err := certs.Build(certs.Request{Datastore: ds, DNSNames: []string{"x"}, Clients: []certs.ClientCertificate{{Role: "r", Identity: "https://x/y", SecretName: "s"}}}); err == nil {
		t.Error("a client certificate named by a non-SPIFFE identity was built")
	}
}
