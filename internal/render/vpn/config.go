package vpn

import (
	"fmt"
	"strings"

	"secured.dev/operator/api/v1alpha1"
)

// Files of the tunnel Secrets the sidecars mount.
const (
	AddressesFile = "addresses"
	CAFile        = "ca.crt"
)

// KeyFile holds a member's private key: WireGuard's base64 key or OpenVPN's PEM.
func KeyFile(member string) string { return member + ".key" }

// CertFile holds a member's OpenVPN certificate.
func CertFile(member string) string { return member + ".crt" }

// WireGuardFile is a member's `wg setconf` file.
func WireGuardFile(member string) string { return member + ".conf" }

// OpenVPNFile is the configuration of the member's end of its tunnel to peer.
func OpenVPNFile(member, peer string) string { return member + "--" + peer + ".conf" }

// SecretData renders the tunnel Secrets: nodes, which the datastore's sidecars mount, holds
// the nodes' keys, certificates and configurations; clients, which benchmark clients mount,
// the client slots' (nil when clients are not in the tunnel). Both hold the address table and
// OpenVPN's CA certificate. So a client pod, which runs whatever workload it is given, holds
// no key that lets it pose as a node, and a node holds none of the clients'. It fails when a
// member has no key: Ensure makes them.
func SecretData(p Plan, k Keys) (nodes, clients map[string][]byte, err error) {
	nodes = map[string][]byte{AddressesFile: p.Addresses()}
	if p.CarriesClients() {
		clients = map[string][]byte{AddressesFile: p.Addresses()}
	}
	// of is the Secret a member's files go to.
	of := func(m Member) map[string][]byte {
		if m.Host == "" {
			return clients
		}
		return nodes
	}
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
			of(m)[KeyFile(m.Name)] = []byte(priv + "\n")
			of(m)[WireGuardFile(m.Name)] = conf
		}
	case v1alpha1.VPNOpenVPN:
		if k.CA == nil {
			return nil, nil, fmt.Errorf("no OpenVPN CA")
		}
		for _, data := range []map[string][]byte{nodes, clients} {
			if data != nil {
				data[CAFile] = k.CA.CertPEM
			}
		}
		for i, m := range p.Members {
			c, ok := k.Certs[m.Name]
			if !ok {
				return nil, nil, fmt.Errorf("no OpenVPN certificate for %s", m.Name)
			}
			data := of(m)
			data[CertFile(m.Name)], data[KeyFile(m.Name)] = c.CertPEM, c.KeyPEM
			for j, peer := range p.Members {
				if j != i && p.peers(i, j) {
					data[OpenVPNFile(m.Name, peer.Name)] = OpenVPNConfig(p, i, j)
				}
			}
		}
	default:
		return nil, nil, fmt.Errorf("no tunnel of type %q", p.Type)
	}
	return nodes, clients, nil
}

// peers reports whether members i and j share a tunnel: nodes reach every member, clients
// reach only nodes.
func (p Plan) peers(i, j int) bool {
	return p.Members[i].Host != "" || p.Members[j].Host != ""
}

// WireGuardConfig is the `wg setconf` file of member self: its key and port, and one peer per
// member it talks to, each allowed only its own tunnel address.
func WireGuardConfig(p Plan, self int, k Keys) ([]byte, error) {
	me := p.Members[self]
	var b strings.Builder
	fmt.Fprintf(&b, "# %s, %s in the tunnel\n[Interface]\nPrivateKey = %s\nListenPort = %d\n", me.Name, me.Address, k.WireGuard[me.Name], WireGuardPort)
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
// the mounted Secret (openvpn --cd).
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
	fmt.Fprintf(&b, "ca %s\ncert %s\nkey %s\nverify-x509-name %s name\n", CAFile, CertFile(me.Name), KeyFile(me.Name), them.Name)
	// One data cipher, no negotiation fallback to anything else: a study measures exactly it.
	fmt.Fprintf(&b, "data-ciphers %s\ndata-ciphers-fallback %s\ntls-version-min 1.2\n", p.Cipher, p.Cipher)
	b.WriteString("keepalive 5 20\npersist-tun\nverb 3\n")
	return []byte(b.String())
}
