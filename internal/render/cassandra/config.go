// Package cassandra renders what a Cassandra node runs with, from a SecuredDatastore and its
// effective encryption profile: cassandra.yaml and the JVM options. Pure functions: spec in,
// files out; golden files pin the output for every shipped profile.
package cassandra

import (
	"fmt"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/crypto"
	"secured.dev/operator/internal/render/datakeys"
)

// Ports every node uses.
const (
	NativePort  = 9042
	StoragePort = 7000
	JMXPort     = 7199
)

// Layout is where a node keeps its data and finds its TLS material.
type Layout struct {
	DataDir string
	// TLSDir holds cert-manager's Secret: tls.key (PKCS#8), tls.crt, ca.crt, and the combined
	// PEM (key then chain) that PEMBasedSslContextFactory reads as its keystore.
	TLSDir string
	// TrustDir holds ca.crt, the CAs the node trusts: in pods the datastore's trust bundle
	// (the current CA and the previous ones during a rotation); TLSDir when empty.
	TrustDir string
	// AtRestDir holds the at-rest keys' Secret (internal/render/atrest's files).
	AtRestDir string
}

// PodLayout is the layout in the pod: the upstream image's /var/lib/cassandra, the certificate
// Secret under /etc/cassandra/tls and the trust bundle under /etc/cassandra/trust.
var PodLayout = Layout{DataDir: "/var/lib/cassandra", TLSDir: "/etc/cassandra/tls", TrustDir: "/etc/cassandra/trust", AtRestDir: "/etc/cassandra/at-rest"}

// EncryptedDataDir is the data directory of an encrypted volume: a directory of the volume, not
// its root, which may hold a filesystem's lost+found and so never be empty when encryption
// begins.
const EncryptedDataDir = "/var/lib/cassandra/encrypted"

func (l Layout) keystore() string { return l.TLSDir + "/tls-combined.pem" }

func (l Layout) truststore() string {
	if l.TrustDir == "" {
		return l.TLSDir + "/ca.crt"
	}
	return l.TrustDir + "/ca.crt"
}

// Topology is what the config needs to know about the cluster's shape.
type Topology struct {
	ClusterName string
	Datacenter  string
	// Seeds are host names of the first nodes (stable StatefulSet identities).
	Seeds []string
	// ListenAddress (internode) and RPCAddress (CQL) are left empty in pods: Cassandra binds
	// the pod's address, and the launcher sets the tunnel address of a VPN profile. Tests on
	// one machine give each node its own loopback address.
	ListenAddress, RPCAddress string
	Layout                    Layout
	// PasswordAuthentication: CQL clients log in (PasswordAuthenticator) and roles have only the
	// permissions granted to them (CassandraAuthorizer).
	PasswordAuthentication bool
	// CertificateAuthentication: with PasswordAuthentication, CQL clients are authenticated by
	// the identity in their client certificate (MutualTlsAuthenticator with SPIFFE IDs), which
	// the client channel then demands; roles and permissions stay as they are.
	CertificateAuthentication bool
	// AtRestKeys: the at-rest keystore is mounted. Without encryption at rest in the step, the
	// key provider stays configured (with encryption off), so that commit log segments written
	// encrypted before encryption was turned off still replay after a crash.
	AtRestKeys bool
}

// Config renders cassandra.yaml for a step toward (or at) the effective profile.
func Config(t Topology, step Step) ([]byte, error) {
	enc := step.Encryption
	seeds := make([]string, len(t.Seeds))
	for i, s := range t.Seeds {
		seeds[i] = fmt.Sprintf("%s:%d", s, StoragePort)
	}
	l := t.Layout
	if l == (Layout{}) {
		l = PodLayout
	}
	client, err := clientEncryption(enc.ClientToNode, l)
	if err != nil {
		return nil, fmt.Errorf("clientToNode: %w", err)
	}
	server, err := serverEncryption(enc.NodeToNode, step.InternodeInboundOnly, l)
	if err != nil {
		return nil, fmt.Errorf("nodeToNode: %w", err)
	}
	cfg := map[string]any{
		"cluster_name": t.ClusterName,
		"num_tokens":   16,
		"allocate_tokens_for_local_replication_factor": 3,
		"partitioner":           "org.apache.cassandra.dht.Murmur3Partitioner",
		"endpoint_snitch":       "GossipingPropertyFileSnitch",
		"commitlog_sync":        "periodic",
		"commitlog_sync_period": "10000ms",
		"seed_provider": []any{map[string]any{
			"class_name": "org.apache.cassandra.locator.SimpleSeedProvider",
			"parameters": []any{map[string]any{"seeds": strings.Join(seeds, ",")}},
		}},
		// listen_address and rpc_address stay unset: Cassandra then binds the pod's address
		// (a wildcard rpc_address would need a broadcast_rpc_address per pod).
		"native_transport_port":     NativePort,
		"storage_port":              StoragePort,
		"data_file_directories":     []string{l.DataDir + "/data"},
		"commitlog_directory":       l.DataDir + "/commitlog",
		"saved_caches_directory":    l.DataDir + "/saved_caches",
		"hints_directory":           l.DataDir + "/hints",
		"client_encryption_options": client,
		"server_encryption_options": server,
		"authenticator":             "AllowAllAuthenticator",
		"authorizer":                "AllowAllAuthorizer",
	}
	switch a := enc.AtRest; {
	case a != nil && a.Engine != nil:
		cfg["transparent_data_encryption_options"] = transparentDataEncryption(true, a.Engine.KeyBits, l)
	case t.AtRestKeys:
		cfg["transparent_data_encryption_options"] = transparentDataEncryption(false, datakeys.KeyBits[0], l)
	}
	if t.PasswordAuthentication {
		cfg["authenticator"], cfg["authorizer"], cfg["role_manager"] = "PasswordAuthenticator", "CassandraAuthorizer", "CassandraRoleManager"
		if t.CertificateAuthentication {
			if !CertificateLogins(step) {
				return nil, fmt.Errorf("certificate authentication needs a client channel that requires TLS and client certificates (clientToNode mode Required, tls.clientAuth Required)")
			}
			cfg["authenticator"] = map[string]any{
				"class_name": "org.apache.cassandra.auth.MutualTlsAuthenticator",
				"parameters": map[string]any{"validator_class_name": "org.apache.cassandra.auth.SpiffeCertificateValidator"},
			}
		}
	}
	if t.ListenAddress != "" {
		cfg["listen_address"] = t.ListenAddress
	}
	if t.RPCAddress != "" {
		cfg["rpc_address"] = t.RPCAddress
	}
	return yaml.Marshal(cfg)
}

// The launcher puts the at-rest keystore's password (the Secret's datakeys.PasswordFile, named
// by CASSANDRA_AT_REST_PASSWORD_FILE) in place of AtRestPasswordPlaceholder in its copy of
// cassandra.yaml, so that it never sits in the ConfigMap.
const (
	AtRestPasswordPlaceholder  = "@AT_REST_PASSWORD@"
	AtRestPasswordFileVariable = "CASSANDRA_AT_REST_PASSWORD_FILE"
	atRestCipher               = "AES/CBC/PKCS5Padding"
)

// transparentDataEncryption is Cassandra's encryption of the commit log and hints with a key
// from the keystore (JKSKeyProvider reads PKCS #12 as well). Disabled, it still names the key
// provider, which replay uses for a segment whose header says it was encrypted.
func transparentDataEncryption(enabled bool, keyBits int32, l Layout) map[string]any {
	return map[string]any{
		"enabled":         enabled,
		"chunk_length_kb": 64,
		"cipher":          atRestCipher,
		"key_alias":       datakeys.KeyAlias(keyBits),
		"iv_length":       16,
		"key_provider": []any{map[string]any{
			"class_name": "org.apache.cassandra.security.JKSKeyProvider",
			"parameters": []any{map[string]any{
				"keystore":          l.AtRestDir + "/" + datakeys.KeystoreFile,
				"keystore_password": AtRestPasswordPlaceholder,
				"store_type":        "PKCS12",
				"key_password":      AtRestPasswordPlaceholder,
			}},
		}},
	}
}

func tlsCommon(ch v1alpha1.EffectiveChannel, l Layout, opts map[string]any) error {
	opts["ssl_context_factory"] = map[string]any{"class_name": "org.apache.cassandra.security.PEMBasedSslContextFactory"}
	opts["keystore"] = l.keystore()
	opts["truststore"] = l.truststore()
	protocols := make([]string, len(ch.Protocols))
	for i, p := range ch.Protocols {
		protocols[i] = string(p)
	}
	opts["accepted_protocols"] = protocols
	suites, err := jsseNames(ch.CipherSuites)
	if err != nil {
		return err
	}
	opts["cipher_suites"] = suites
	opts["require_client_auth"] = ch.ClientAuth == v1alpha1.ClientAuthRequired
	return nil
}

// jsseNames maps IANA names to the JSSE names Cassandra's configuration takes (netty translates
// them for the OpenSSL engine).
func jsseNames(iana []string) ([]string, error) {
	out := make([]string, len(iana))
	for i, name := range iana {
		s, ok := crypto.Lookup(name)
		if !ok || s.JSSEName == "" && s.OpenSSLName == "" {
			return nil, fmt.Errorf("cipher suite %s has no JSSE or OpenSSL name", name)
		}
		out[i] = s.JSSEName
		if out[i] == "" {
			out[i] = s.Name
		}
	}
	return out, nil
}

func clientEncryption(ch v1alpha1.EffectiveChannel, l Layout) (map[string]any, error) {
	opts := map[string]any{"enabled": ch.Mode != v1alpha1.ChannelDisabled, "optional": ch.Mode == v1alpha1.ChannelOptional}
	if ch.Mode == v1alpha1.ChannelDisabled {
		return opts, nil
	}
	return opts, tlsCommon(ch, l, opts)
}

func serverEncryption(ch v1alpha1.EffectiveChannel, inboundOnly bool, l Layout) (map[string]any, error) {
	opts := map[string]any{"internode_encryption": "none", "legacy_ssl_storage_port_enabled": false}
	if ch.Mode == v1alpha1.ChannelDisabled {
		return opts, nil
	}
	// internode_encryption is what a node sends; optional is whether it also accepts plaintext.
	if !inboundOnly {
		opts["internode_encryption"] = map[v1alpha1.InternodeScope]string{
			v1alpha1.ScopeAll: "all", v1alpha1.ScopeDatacenter: "dc", v1alpha1.ScopeRack: "rack", "": "all",
		}[ch.Scope]
	}
	opts["optional"] = ch.Mode == v1alpha1.ChannelOptional
	opts["outbound_keystore"] = l.keystore()
	return opts, tlsCommon(ch, l, opts)
}

// JVM is what the node's JVM options depend on besides the profile.
type JVM struct {
	HeapMiB int64
	// JMXPort for nodetool, bound to localhost. Defaults to JMXPort; tests that run several
	// nodes on one machine give each its own.
	JMXPort int
	// EmulateNoAcceleration switches hardware AES off in the JDK's own crypto.
	EmulateNoAcceleration bool
	// CompileThresholdScaling, when set, scales HotSpot's compile thresholds
	// (spec.cassandra.jit); the API admits only a decimal from 0.01 to 1.
	CompileThresholdScaling string
	// NoSizeEstimates switches off the recorder of system.size_estimates (spec.cassandra.sizeEstimates).
	NoSizeEstimates bool
	// Alone: the datastore has a single node, so there are no peers to wait for.
	Alone bool
}

// compileThresholdScaling is the API's rule again: the value lands in the JVM's options file.
var compileThresholdScaling = regexp.MustCompile(`^(0[.](0[1-9]|[1-9][0-9]?)|1([.]0)?)$`)

// JVMOptions renders jvm-server.options: heap, the TLS engine, and crypto acceleration
// switched off in software when the datastore emulates a CPU without AES-NI.
func JVMOptions(j JVM, enc v1alpha1.EffectiveEncryption) []byte {
	if j.JMXPort == 0 {
		j.JMXPort = JMXPort
	}
	lines := []string{
		"# Rendered by the Secured Datastore Operator.",
		fmt.Sprintf("-Xms%dm", j.HeapMiB),
		fmt.Sprintf("-Xmx%dm", j.HeapMiB),
		"-XX:+UseG1GC",
		"-XX:+HeapDumpOnOutOfMemoryError",
		fmt.Sprintf("-Dcassandra.jmx.local.port=%d", j.JMXPort),
	}
	if usesJDK(enc) {
		lines = append(lines, "# A channel needs the JDK TLS engine (see status.encryption.effective.*.engineReason).",
			"-Dcassandra.disable_tcactive_openssl=true")
	}
	if compileThresholdScaling.MatchString(j.CompileThresholdScaling) {
		lines = append(lines, "# spec.cassandra.jit: compile hot code after fewer calls, so a benchmark sees the optimized code sooner.",
			"-XX:CompileThresholdScaling="+j.CompileThresholdScaling)
	}
	if j.NoSizeEstimates {
		lines = append(lines, "# spec.cassandra.sizeEstimates: Disabled.", "-Dcassandra.size_recorder_interval=0")
	}
	if j.Alone {
		// A new seed sleeps for the ring delay (30s) before it picks tokens, a node waits three
		// times for gossip to settle (8s each) to learn of peers, and the default superuser is
		// created 10s after start so that peers can join first, which held the operator's
		// logins back: 67s of a single node's 98s from start to logins on a 2-core machine, with
		// no peer to wait for. All three govern only the node's own start; with more nodes
		// every node renders Cassandra's defaults.
		lines = append(lines, "# One node: no peers to learn the ring from or to wait for.",
			"-Dcassandra.ring_delay_ms=1000", "-Dcassandra.skip_wait_for_gossip_to_settle=0", "-Dcassandra.superuser_setup_delay_ms=0")
	}
	if j.EmulateNoAcceleration {
		lines = append(lines, "# Emulate a CPU without AES-NI/PCLMULQDQ for the JDK's own crypto.",
			"-XX:-UseAES", "-XX:-UseCLMUL",
			"-XX:+UnlockDiagnosticVMOptions", "-XX:-UseAESIntrinsics", "-XX:-UseAESCTRIntrinsics", "-XX:-UseGHASHIntrinsics")
	}
	return []byte(strings.Join(lines, "\n") + "\n")
}

// NoAccelerationEnv is the environment that hides AES-NI and PCLMULQDQ from OpenSSL-family
// native code (BoringSSL in netty-tcnative): bits 57 and 33 of OPENSSL_ia32cap cleared.
var NoAccelerationEnv = map[string]string{"OPENSSL_ia32cap": "~0x200000200000000"}

// usesJDK: Cassandra has one switch for both channels, so one channel needing the JDK engine
// moves both.
func usesJDK(enc v1alpha1.EffectiveEncryption) bool {
	for _, ch := range []v1alpha1.EffectiveChannel{enc.ClientToNode, enc.NodeToNode} {
		if ch.Mode != v1alpha1.ChannelDisabled && ch.Engine == v1alpha1.TLSEngineJDK {
			return true
		}
	}
	return false
}

// RackDC renders cassandra-rackdc.properties, which GossipingPropertyFileSnitch reads.
func RackDC(t Topology) []byte {
	return []byte(fmt.Sprintf("dc=%s\nrack=rack1\n", t.Datacenter))
}
