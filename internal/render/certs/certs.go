// Package certs renders the cert-manager objects that give a datastore's nodes their TLS
// certificates: a CA of the datastore's own (self-signed Issuer → CA Certificate → CA Issuer)
// unless the user names an issuer, and one node Certificate whose Secret every node mounts.
package certs

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/crypto"
)

// Defaults of node certificates.
var (
	DefaultDuration = 2160 * time.Hour // 90 days
	caDuration      = 5 * 365 * 24 * time.Hour
	caRenewBefore   = 180 * 24 * time.Hour
)

// Request is what a datastore's certificates are built from.
type Request struct {
	Datastore *v1alpha1.SecuredDatastore
	// Labels every object carries.
	Labels map[string]string
	// DNSNames of every pod and Service the nodes answer as.
	DNSNames []string
	// Channels that use TLS: their suites decide the key algorithm when the spec leaves it open.
	Channels []v1alpha1.EffectiveChannel
	// KeystorePasswordSecret, when set, asks for keystore.p12 too, protected by the password
	// under "password" in that Secret (HDFS's HTTPS servers read PKCS#12 only).
	KeystorePasswordSecret string
	// Clients: client certificates to issue from the same CA, for clients of a channel that
	// demands one.
	Clients []ClientCertificate
}

// ClientCertificate is a certificate a client presents: its common name is the role it stands
// for, its only subject alternative name the identity (a SPIFFE ID) a server maps to that role.
type ClientCertificate struct {
	Role, Identity, SecretName string
}

// ClientCertificateName names the Certificate of a client certificate's Secret.
func ClientCertificateName(secretName string) string {
	return strings.TrimSuffix(secretName, "-tls") + "-cert"
}

// KeystorePasswordSecret names the Secret with the password of a datastore's PKCS#12 keystore.
func KeystorePasswordSecret(ds *v1alpha1.SecuredDatastore) string {
	return ds.Name + "-keystore-password"
}

// Names of a datastore's certificate objects.
func SelfSignedIssuer(ds *v1alpha1.SecuredDatastore) string { return ds.Name + "-selfsigned" }
func CAIssuer(ds *v1alpha1.SecuredDatastore) string         { return ds.Name + "-ca" }
func CACertificate(ds *v1alpha1.SecuredDatastore) string    { return ds.Name + "-ca" }
func NodeCertificate(ds *v1alpha1.SecuredDatastore) string  { return ds.Name + "-node" }

// NodeSecret is the Secret cert-manager writes the node certificate to: tls.key (PKCS#8),
// tls.crt, ca.crt and tls-combined.pem (key then chain, the keystore Cassandra reads).
func NodeSecret(ds *v1alpha1.SecuredDatastore) string { return ds.Name + "-node-tls" }

// Build returns the objects to apply, CA chain first. It fails when the requested key cannot
// authenticate any suite a channel allows.
func Build(r Request) ([]client.Object, error) {
	ds := r.Datastore
	spec := v1alpha1.CertificatesSpec{}
	if ds.Spec.Certificates != nil {
		spec = *ds.Spec.Certificates
	}
	key, err := NodeKey(spec.PrivateKey, r.Channels)
	if err != nil {
		return nil, err
	}
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ds.Namespace, Labels: r.Labels}
	}
	var objs []client.Object
	issuer := cmmeta.IssuerReference{Name: CAIssuer(ds), Kind: cmv1.IssuerKind, Group: "cert-manager.io"}
	if ref := spec.IssuerRef; ref != nil {
		issuer = cmmeta.IssuerReference{Name: ref.Name, Kind: or(ref.Kind, cmv1.IssuerKind), Group: or(ref.Group, "cert-manager.io")}
	} else {
		// A namespaced self-signed Issuer rather than a ClusterIssuer: it is owned by the
		// datastore and deleted with it, and the operator needs no cluster-wide issuer rights.
		objs = append(objs,
			&cmv1.Issuer{
				TypeMeta:   metav1.TypeMeta{APIVersion: cmv1.SchemeGroupVersion.String(), Kind: cmv1.IssuerKind},
				ObjectMeta: meta(SelfSignedIssuer(ds)),
				Spec:       cmv1.IssuerSpec{IssuerConfig: cmv1.IssuerConfig{SelfSigned: &cmv1.SelfSignedIssuer{}}},
			},
			&cmv1.Certificate{
				TypeMeta:   metav1.TypeMeta{APIVersion: cmv1.SchemeGroupVersion.String(), Kind: cmv1.CertificateKind},
				ObjectMeta: meta(CACertificate(ds)),
				Spec: cmv1.CertificateSpec{
					IsCA: true, CommonName: fmt.Sprintf("%s.%s datastore CA", ds.Name, ds.Namespace), SecretName: CACertificate(ds),
					Duration: &metav1.Duration{Duration: caDuration}, RenewBefore: &metav1.Duration{Duration: caRenewBefore},
					PrivateKey: &cmv1.CertificatePrivateKey{Algorithm: cmv1.ECDSAKeyAlgorithm, Size: 256, Encoding: cmv1.PKCS8, RotationPolicy: cmv1.RotationPolicyAlways},
					IssuerRef:  cmmeta.IssuerReference{Name: SelfSignedIssuer(ds), Kind: cmv1.IssuerKind, Group: "cert-manager.io"},
					// Enough history for the trust bundle to see the CAs before a rotation.
					RevisionHistoryLimit: ptr.To[int32](3),
				},
			},
			&cmv1.Issuer{
				TypeMeta:   metav1.TypeMeta{APIVersion: cmv1.SchemeGroupVersion.String(), Kind: cmv1.IssuerKind},
				ObjectMeta: meta(CAIssuer(ds)),
				Spec:       cmv1.IssuerSpec{IssuerConfig: cmv1.IssuerConfig{CA: &cmv1.CAIssuer{SecretName: CACertificate(ds)}}},
			},
		)
	}
	duration := metav1.Duration{Duration: DefaultDuration}
	if spec.Duration != nil {
		duration = *spec.Duration
	}
	renew := metav1.Duration{Duration: duration.Duration / 3}
	if spec.RenewBefore != nil {
		renew = *spec.RenewBefore
	}
	var keystores *cmv1.CertificateKeystores
	if r.KeystorePasswordSecret != "" {
		// No profile: cert-manager 1.11 (what the offline Kind cluster runs) has none, and its
		// default encoding is one every JDK reads.
		keystores = &cmv1.CertificateKeystores{PKCS12: &cmv1.PKCS12Keystore{
			Create:            true,
			PasswordSecretRef: cmmeta.SecretKeySelector{LocalObjectReference: cmmeta.LocalObjectReference{Name: r.KeystorePasswordSecret}, Key: "password"},
		}}
	}
	objs = append(objs, &cmv1.Certificate{
		TypeMeta:   metav1.TypeMeta{APIVersion: cmv1.SchemeGroupVersion.String(), Kind: cmv1.CertificateKind},
		ObjectMeta: meta(NodeCertificate(ds)),
		Spec: cmv1.CertificateSpec{
			CommonName: r.DNSNames[0],
			DNSNames:   r.DNSNames,
			SecretName: NodeSecret(ds),
			// Internode TLS is mutual: every node is server and client.
			Usages:     []cmv1.KeyUsage{cmv1.UsageServerAuth, cmv1.UsageClientAuth, cmv1.UsageDigitalSignature, cmv1.UsageKeyEncipherment},
			Duration:   &duration,
			PrivateKey: &cmv1.CertificatePrivateKey{Algorithm: key.Algorithm, Size: key.Size, Encoding: cmv1.PKCS8, RotationPolicy: cmv1.RotationPolicyAlways},
			// Cassandra's PEM keystore is one file with the key and the chain.
			AdditionalOutputFormats: []cmv1.CertificateAdditionalOutputFormat{{Type: cmv1.CertificateOutputFormatCombinedPEM}},
			Keystores:               keystores,
			RenewBefore:             &renew,
			IssuerRef:               issuer,
			SecretTemplate:          &cmv1.CertificateSecretTemplate{Labels: r.Labels},
			RevisionHistoryLimit:    ptr.To[int32](3),
		},
	})
	for _, c := range r.Clients {
		uri, err := url.Parse(c.Identity)
		if err != nil || uri.Scheme != "spiffe" || uri.Host == "" {
			return nil, fmt.Errorf("client certificate of role %s: identity %q is not a SPIFFE ID", c.Role, c.Identity)
		}
		objs = append(objs, &cmv1.Certificate{
			TypeMeta:   metav1.TypeMeta{APIVersion: cmv1.SchemeGroupVersion.String(), Kind: cmv1.CertificateKind},
			ObjectMeta: meta(ClientCertificateName(c.SecretName)),
			Spec: cmv1.CertificateSpec{
				CommonName: c.Role,
				URIs:       []string{c.Identity},
				SecretName: c.SecretName,
				Usages:     []cmv1.KeyUsage{cmv1.UsageClientAuth, cmv1.UsageDigitalSignature, cmv1.UsageKeyEncipherment},
				Duration:   &duration,
				// The key of the node certificate's kind: a server that accepts one accepts the
				// other.
				PrivateKey:           &cmv1.CertificatePrivateKey{Algorithm: key.Algorithm, Size: key.Size, Encoding: cmv1.PKCS8, RotationPolicy: cmv1.RotationPolicyAlways},
				RenewBefore:          &renew,
				IssuerRef:            issuer,
				SecretTemplate:       &cmv1.CertificateSecretTemplate{Labels: r.Labels},
				RevisionHistoryLimit: ptr.To[int32](3),
			},
		})
	}
	return objs, nil
}

// KeySpec is the key of node certificates.
type KeySpec struct {
	Algorithm cmv1.PrivateKeyAlgorithm
	Size      int
}

// NodeKey: the spec's key, else RSA when some allowed suite authenticates with RSA and none
// with ECDSA (TLS 1.2 suites name the certificate type they need), else ECDSA P-256.
func NodeKey(spec v1alpha1.PrivateKeySpec, channels []v1alpha1.EffectiveChannel) (KeySpec, error) {
	auths := map[string][]string{}
	for _, ch := range channels {
		for _, name := range ch.CipherSuites {
			if s, ok := crypto.Lookup(name); ok {
				auths[s.Authentication] = append(auths[s.Authentication], name)
			}
		}
	}
	usable := func(alg string) bool {
		return len(auths) == 0 || len(auths["any"]) > 0 || len(auths[alg]) > 0
	}
	switch {
	case spec.Algorithm == "" && !usable("ECDSA") && usable("RSA"):
		return KeySpec{cmv1.RSAKeyAlgorithm, int(or(spec.Size, 2048))}, nil
	case spec.Algorithm == "" || spec.Algorithm == "ECDSA":
		if !usable("ECDSA") {
			return KeySpec{}, fmt.Errorf("spec.certificates.privateKey.algorithm: an ECDSA key cannot serve any allowed cipher suite (%v need RSA): set algorithm RSA or allow an ECDSA or TLS 1.3 suite", auths["RSA"])
		}
		return KeySpec{cmv1.ECDSAKeyAlgorithm, int(or(spec.Size, 256))}, nil
	case spec.Algorithm == "RSA":
		if !usable("RSA") {
			return KeySpec{}, fmt.Errorf("spec.certificates.privateKey.algorithm: an RSA key cannot serve any allowed cipher suite (%v need ECDSA): set algorithm ECDSA or allow an RSA or TLS 1.3 suite", auths["ECDSA"])
		}
		return KeySpec{cmv1.RSAKeyAlgorithm, int(or(spec.Size, 2048))}, nil
	}
	if !usable("Ed25519") {
		return KeySpec{}, fmt.Errorf("spec.certificates.privateKey.algorithm: an Ed25519 key serves only TLS 1.3 suites: allow one or choose ECDSA")
	}
	return KeySpec{cmv1.Ed25519KeyAlgorithm, 0}, nil
}

func or[T comparable](v, fallback T) T {
	var zero T
	if v == zero {
		return fallback
	}
	return v
}
