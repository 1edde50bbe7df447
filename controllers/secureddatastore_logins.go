package controllers

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"net"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/cqlauth"
	"secured.dev/operator/internal/pintls"
	"secured.dev/operator/internal/render/benchmark"
	"secured.dev/operator/internal/render/cassandra"
	"secured.dev/operator/internal/render/certs"
	"secured.dev/operator/internal/status"
)

// loginRetry paces bootstrap attempts that failed (Cassandra creates its default superuser
// about 10 s after the first node starts).
const loginRetry = 15 * time.Second

// secureLogins closes a Cassandra datastore with password authentication once every node is
// up: the generated superuser replaces the default one and the benchmark clients' role exists
// (cqlauth.Bootstrap). Until then the datastore is not Ready: a client would find no role to
// log in as, and the well-known default superuser would still open it.
func (r *SecuredDatastoreReconciler) secureLogins(ctx context.Context, s *datastoreScope) (ctrl.Result, error) {
	ds := s.ds
	e, ok := s.engine.(*cassandraEngine)
	if !ok {
		return ctrl.Result{}, nil
	}
	if !cassandra.PasswordAuthentication(ds, e.bound()) {
		reason, msg := v1alpha1.ReasonAuthenticationDisabled, "spec.cassandra.authentication is None: any client that reaches the CQL port gets in without a login"
		if cassandra.PasswordAuthentication(ds, nil) {
			reason, msg = v1alpha1.ReasonTunnelAuthenticates, "the VPN carries client traffic, so CQL answers tunnel members only and their tunnel keys admit them; Cassandra runs without logins (the operator is no tunnel member and could not replace the default superuser)"
		}
		setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionLoginsReady, metav1.ConditionFalse, reason, msg)
		return ctrl.Result{}, nil
	}
	n := cassandra.NamesOf(ds)
	superuser, createdSuperuser, err := r.ensureLogin(ctx, ds, n.SuperuserSecret(), cassandra.SuperuserRole)
	if err != nil {
		return ctrl.Result{}, err
	}
	clients, createdClient, err := r.ensureLogin(ctx, ds, n.ClientSecret(), cassandra.ClientRole)
	if err != nil {
		return ctrl.Result{}, err
	}
	domain := r.Options.clusterDomain()
	// Where every client must present a certificate, the certificate becomes the login: its
	// identity is mapped to its role here, under password authentication (Cassandra's default
	// superuser has no certificate), and the nodes then roll to MutualTlsAuthenticator.
	certificates := cassandra.CertificateLogins(e.target)
	mapped := cassandra.IdentitiesMapped(ds, domain)
	// A login generated anew (its Secret was deleted) is not in Cassandra yet.
	if meta.IsStatusConditionTrue(ds.Status.Conditions, v1alpha1.ConditionLoginsReady) && !createdSuperuser && !createdClient && (mapped || !certificates) {
		// How clients log in changes with the rolls, without a bootstrap.
		if msg := e.loginsMessage(certificates); setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionLoginsReady, metav1.ConditionTrue, v1alpha1.ReasonLoginsBootstrapped, msg) {
			r.Recorder.Eventf(ds, nil, corev1.EventTypeNormal, "LoginsChanged", "Authenticate", "%s", msg)
		}
		return ctrl.Result{}, nil
	}
	pending := func(reason, msg string) {
		setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionLoginsReady, metav1.ConditionFalse, reason, msg)
		if meta.IsStatusConditionTrue(ds.Status.Conditions, v1alpha1.ConditionReady) {
			setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonLoginsPending,
				"every node is up; the logins are not bootstrapped yet: "+msg)
		}
	}
	var hosts []string
	for i := range s.pods {
		if p := &s.pods[i]; status.PodReady(p) && p.Status.PodIP != "" {
			hosts = append(hosts, net.JoinHostPort(p.Status.PodIP, strconv.Itoa(cassandra.NativePort)))
		}
	}
	if nodes := cassandra.Nodes(ds); int32(len(hosts)) < nodes {
		pending(v1alpha1.ReasonLoginsPending, fmt.Sprintf("waiting for every node (%d of %d ready): roles are written at QUORUM", len(hosts), nodes))
		return ctrl.Result{}, nil
	}
	dial, err := r.cqlDial(ctx, ds, s.resolution.Effective.ClientToNode, hosts)
	if err != nil {
		pending(v1alpha1.ReasonLoginBootstrapFailed, err.Error())
		return ctrl.Result{RequeueAfter: loginRetry}, nil
	}
	plan := cqlauth.Plan{Superuser: superuser, Client: clients, Keyspace: "ycsb", Datacenter: cassandra.Datacenter(ds),
		ReplicationFactor: int(min(cassandra.Nodes(ds), 3)),
		// The nodes may be rolling to it: the role manager of those that run it refuses passwords.
		CertificateLogins: mapped && cassandra.CertificateLogins(e.step)}
	if certificates {
		for _, id := range cassandra.Identities(ds, domain) {
			plan.Identities = append(plan.Identities, cqlauth.Identity{ID: id.Identity, Role: id.Role})
		}
	}
	bootstrap := r.Options.bootstrapLogins
	if bootstrap == nil {
		bootstrap = cqlauth.Bootstrap
	}
	key, run := client.ObjectKeyFromObject(ds), func(ctx context.Context) (cqlauth.Outcome, error) {
		return bootstrap(ctx, dial.Connect(), plan)
	}
	task := r.pool().bootstrapLogins(key, run)
	switch {
	case task == nil:
		pending(v1alpha1.ReasonLoginsPending, fmt.Sprintf("replacing the default superuser and creating the clients' role on %d nodes", len(hosts)))
		return ctrl.Result{}, nil
	case task.err != nil:
		pending(v1alpha1.ReasonLoginBootstrapFailed, task.err.Error())
		r.Recorder.Eventf(ds, nil, corev1.EventTypeWarning, v1alpha1.ReasonLoginBootstrapFailed, "BootstrapLogins", "%s", task.err.Error())
		// The next attempt, at once: the failed one waited loginRetry before it reported.
		r.pool().bootstrapLogins(key, run)
		return ctrl.Result{}, nil
	}
	if certificates {
		ds.Status.Identities = cassandra.Identities(ds, domain)
	}
	msg := e.loginsMessage(certificates)
	if setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionLoginsReady, metav1.ConditionTrue, v1alpha1.ReasonLoginsBootstrapped, msg) {
		if task.out.Replaced {
			msg = "the default superuser cassandra is gone; " + msg
		}
		r.Recorder.Eventf(ds, nil, corev1.EventTypeNormal, v1alpha1.ReasonLoginsBootstrapped, "BootstrapLogins", "%s", msg)
	}
	// Ready again on the next pass, from the roll's state.
	return ctrl.Result{Requeue: true}, nil
}

// loginsMessage says how clients log in, once the logins are bootstrapped: by certificate
// (certificates: the profile demands them) only when every node runs the configuration that
// authenticates by certificate; until then by password.
func (e *cassandraEngine) loginsMessage(certificates bool) string {
	ds, n := e.ds, cassandra.NamesOf(e.ds)
	if !certificates {
		return fmt.Sprintf("clients log in: the superuser %s (Secret %s) and the benchmark clients' role %s, which may use keyspace ycsb only (Secret %s)",
			cassandra.SuperuserRole, n.SuperuserSecret(), cassandra.ClientRole, n.ClientSecret())
	}
	msg := fmt.Sprintf("clients log in with their certificates, whose identity is their role: the superuser %s (Secret %s) and the benchmark clients' role %s, which may use keyspace ycsb only (Secret %s); a certificate of the datastore's CA without one of these identities is refused",
		cassandra.SuperuserRole, n.SuperuserCertSecret(), cassandra.ClientRole, n.ClientCertSecret())
	rolled := cassandra.IdentitiesMapped(ds, e.r.Options.clusterDomain()) && cassandra.CertificateLogins(e.step) && !e.started && status.SetUpdated(e.sts)
	if !rolled {
		msg += "; the nodes restart one at a time to authenticate by certificate, and accept passwords until then"
	}
	return msg
}

// ensureLogin returns the login in Secret name, generating it the first time (created). The Secret has no
// owner: like the volumes, whose system_auth tables hold the role it opens, it outlives the
// datastore, so that a datastore created again on the same volumes can still log in.
func (r *SecuredDatastoreReconciler) ensureLogin(ctx context.Context, ds *v1alpha1.SecuredDatastore, name, username string) (l cqlauth.Login, created bool, err error) {
	sec, err := r.ownedSecret(ctx, ds, name)
	if err != nil {
		return l, false, err
	}
	if sec != nil {
		l = cqlauth.Login{Username: string(sec.Data["username"]), Password: string(sec.Data["password"])}
		if l.Username == "" || l.Password == "" {
			return l, false, r.blockReady(ds, v1alpha1.ReasonLoginBootstrapFailed,
				fmt.Sprintf("Secret %s lacks a username or a password: restore them, or delete the Secret together with the datastore's volumes", name))
		}
		return l, false, nil
	}
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return l, false, err
	}
	l = cqlauth.Login{Username: username, Password: base64.RawURLEncoding.EncodeToString(b)}
	sec = &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ds.Namespace, Labels: cassandra.Labels(ds)},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{"username": []byte(l.Username), "password": []byte(l.Password)},
	}
	if err := r.Client.Create(ctx, sec); err != nil {
		return cqlauth.Login{}, false, fmt.Errorf("creating Secret %s: %w", name, err)
	}
	return l, true, nil
}

// cqlDial reaches the nodes as the benchmark's clients do: over the client channel's TLS whenever
// it offers TLS, Optional included, since the statements carry passwords (pinned the same way,
// verified against the trust bundle, with the node certificate where clients must present one);
// in plaintext only when the profile has no TLS for clients at all.
func (r *SecuredDatastoreReconciler) cqlDial(ctx context.Context, ds *v1alpha1.SecuredDatastore, ch v1alpha1.EffectiveChannel, hosts []string) (cqlauth.Dial, error) {
	d := cqlauth.Dial{Hosts: hosts}
	if ch.Mode == v1alpha1.ChannelDisabled {
		return d, nil
	}
	target, err := benchmark.DatastoreTarget(ds, r.Options.clusterDomain())
	if err != nil {
		return d, err
	}
	if target.TLS == nil {
		return d, fmt.Errorf("the client channel is %s but the benchmark's client sees no TLS to pin", ch.Mode)
	}
	if d.Pin, err = pintls.Parse(target.TLS.Protocol, target.TLS.CipherSuite); err != nil {
		return d, err
	}
	trust := &corev1.ConfigMap{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: certs.TrustConfigMap(ds)}, trust); err != nil {
		return d, fmt.Errorf("reading the trust bundle: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM([]byte(trust.Data[certs.BundleKey])) {
		return d, fmt.Errorf("ConfigMap %s has no CA certificate in %s", trust.Name, certs.BundleKey)
	}
	d.TLS = &tls.Config{RootCAs: roots, ServerName: target.TLS.ServerName}
	if ch.ClientAuth == v1alpha1.ClientAuthRequired {
		// The superuser's own certificate: once the nodes authenticate by certificate, its
		// identity is what makes the session the superuser's.
		name := cassandra.NamesOf(ds).SuperuserCertSecret()
		sec := &corev1.Secret{}
		if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: name}, sec); err != nil {
			return d, fmt.Errorf("reading the superuser's client certificate (Secret %s, which cert-manager issues): %w", name, err)
		}
		cert, err := tls.X509KeyPair(sec.Data[corev1.TLSCertKey], sec.Data[corev1.TLSPrivateKeyKey])
		if err != nil {
			return d, fmt.Errorf("the superuser's client certificate in Secret %s: %w", name, err)
		}
		d.TLS.Certificates = []tls.Certificate{cert}
	}
	return d, nil
}

// ownedSecret reads a Secret the datastore keeps without an owner reference (logins and keys,
// which outlive the datastore object as its data does), bypassing the cache: nil when it does
// not exist yet, a NameConflict when it exists but the operator did not make it for this
// datastore.
func (r *SecuredDatastoreReconciler) ownedSecret(ctx context.Context, ds *v1alpha1.SecuredDatastore, name string) (*corev1.Secret, error) {
	sec := &corev1.Secret{}
	switch err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: name}, sec); {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading Secret %s: %w", name, err)
	}
	if !madeFor(sec, ds) {
		return nil, r.nameConflict(ds, "Secret", name)
	}
	return sec, nil
}

// madeFor: the operator made the Secret for this datastore (its labels say so).
func madeFor(sec *corev1.Secret, ds *v1alpha1.SecuredDatastore) bool {
	labels := cassandra.Labels(ds)
	return sec.Labels["app.kubernetes.io/managed-by"] == labels["app.kubernetes.io/managed-by"] && sec.Labels["app.kubernetes.io/instance"] == ds.Name
}
