package vpn

import (
	"fmt"
	"strings"

	"secured.dev/operator/api/v1alpha1"
)

// Files of the tunnel Secrets.
const (
	// AddressesFile, CAFile and KeyServerCAFile are in the public Secret every member mounts.
	AddressesFile = "addresses"
	CAFile        = "ca.crt"
	// KeyServerCAFile is the certificate the sidecar pins when it fetches its key.
	KeyServerCAFile = "key-server.crt"
	// CAKeyFile, in the keys Secret, is the OpenVPN CA's private key.
	CAKeyFile = "ca.key"
)

// KeyFile holds a member's private key (WireGuard's base64 key or OpenVPN's PEM) in the keys
// Secret, which no pod mounts.
func KeyFile(member string) string { return member + ".key" }

// CertFile holds a member's OpenVPN certificate.
func CertFile(member string) string { return member + ".crt" }

// WireGuardFile is a member's `wg setconf` file without its PrivateKey line, which the sidecar
// adds from the key it fetched.
func WireGuardFile(member string) string { return member + ".conf" }

// OpenVPNFile is the configuration of the member's end of its tunnel to peer.
func OpenVPNFile(member, peer string) string { return member + "--" + peer + ".conf" }

// SecretData renders the tunnel's two Secrets. public, which every member's sidecar mounts,
// holds what is no secret: the address table, every member's configuration, OpenVPN's
// certificates and CA certificate, and keyServerCA, the certificate of the operator's key
// server. keys, which no pod mounts, holds every member's private key and OpenVPN's CA key:
// the key server hands each member its own and nothing else, so neither a node nor a client
// pod (which runs whatever workload it is given) can pose as another member. It fails when a
// member has no key: Ensure makes them.
func SecretData(p Plan, k Keys, keyServerCA []byte) (public, keys map[string][]byte, err error) {
	public = map[string][]byte{AddressesFile: p.Addresses(), KeyServerCAFile: keyServerCA}
	keys = map[string][]byte{}
	switch p.Type {
	case v1alpha1.VPNWireGuard:
		for i, m := range p.Members {
			priv, ok := k.WireGuard[m.Name]
			if !ok {
				return nil, nil, fmt.Errorf("no WireGuard key for %s", m.Name)
			}
			conf, err := WireGuardConfig(p, i, k)
			if err != nil {
				return nil, nil, err
			}
			keys[KeyFile(m.Name)] = []byte(priv + "\n")
			public[WireGuardFile(m.Name)] = conf
		}
	case v1alpha1.VPNOpenVPN:
		if k.CA == nil {
			return nil, nil, fmt.Errorf("no OpenVPN CA")
		}
		public[CAFile], keys[CAKeyFile] = k.CA.CertPEM, k.CA.KeyPEM
		for i, m := range p.Members {
			c, ok := k.Certs[m.Name]
			if !ok {
				return nil, nil, fmt.Errorf("no OpenVPN certificate for %s", m.Name)
			}
			public[CertFile(m.Name)], keys[KeyFile(m.Name)] = c.CertPEM, c.KeyPEM
			for j, peer := range p.Members {
				if j != i && p.peers(i, j) {
					public[OpenVPNFile(m.Name, peer.Name)] = OpenVPNConfig(p, i, j)
				}
			}
		}
	default:
		return nil, nil, fmt.Errorf("no tunnel of type %q", p.Type)
	}
	return public, keys, nil
}

// peers reports whether members i and j share a tunnel: nodes reach every member, clients
// reach only nodes.
func (p Plan) peers(i, j int) bool {
	return p.Members[i].Host != "" || p.Members[j].Host != ""
}

// WireGuardConfig is the `wg setconf` file of member self without its private key: its port,
// and one peer per member it talks to, each allowed only its own tunnel address.
func WireGuardConfig(p Plan, self int, k Keys) ([]byte, error) {
	me := p.Members[self]
	var b strings.Builder
	fmt.Fprintf(&b, "# %s, %s in the tunnel\n[Interface]\nListenPort = %d\n", me.Name, me.Address, WireGuardPort)
	for j, peer := range p.Members {
		if j == self || !p.peers(self, j) {
			continue
		}
		pub, err := PublicKey(k.WireGuard[peer.Name])
		if err != nil {
			return nil, fmt.Errorf("WireGuard key of %s: %w", peer.Name, err)
		}
		fmt.Fprintf(&b, "\n[Peer]\n# %s\nPublicKey = %s\nAllowedIPs = %s/32\n", peer.Name, pub, peer.Address)
		if peer.Host != "" {
			fmt.Fprintf(&b, "Endpoint = %s:%d\n", peer.Host, WireGuardPort)
		}
		if me.Host == "" {
			// A client keeps its path to the nodes open: they cannot dial it.
			b.WriteString("PersistentKeepalive = 15\n")
		}
	}
	return []byte(b.String()), nil
}

// OpenVPNConfig is member self's end of its point-to-point tunnel to member peer. OpenVPN has
// no mesh mode, so every pair gets a tunnel of its own: the member listed first listens
// (TLS server) on OpenVPNBasePort + the other's index, the other dials it. Both present
// certificates of the tunnel's CA and accept only each other's name. Paths are relative to
// the mounted Secret (openvpn --cd); the sidecar passes the key it fetched with --key.
func OpenVPNConfig(p Plan, self, peer int) []byte {
	me, them := p.Members[self], p.Members[peer]
	var b strings.Builder
	fmt.Fprintf(&b, "# %s (%s) to %s (%s)\n", me.Name, me.Address, them.Name, them.Address)
	fmt.Fprintf(&b, "dev %s%d\ndev-type tun\nproto udp\nifconfig %s %s\n", InterfacePrefix, peer, me.Address, them.Address)
	if self < peer {
		fmt.Fprintf(&b, "tls-server\ndh none\nlport %d\nfloat\nremote-cert-tls client\n", OpenVPNBasePort+peer)
	} else {
		fmt.Fprintf(&b, "tls-client\nremote %s %d\nnobind\nresolv-retry infinite\nremote-cert-tls server\n", them.Host, OpenVPNBasePort+self)
	}
	fmt.Fprintf(&b, "ca %s\ncert %s\nverify-x509-name %s name\n", CAFile, CertFile(me.Name), them.Name)
	// One data cipher, no negotiation fallback to anything else: a study measures exactly it.
	fmt.Fprintf(&b, "data-ciphers %s\ndata-ciphers-fallback %s\ntls-version-min 1.2\n", p.Cipher, p.Cipher)
	b.WriteString("keepalive 5 20\npersist-tun\nverb 3\n")
	return []byte(b.String())
}
