package dataplane

import (
	"encoding/json"
	"net/netip"
	"testing"
	"time"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/vpn"
)

// BenchmarkTunnelThroughput measures raw TCP throughput (iperf3, one stream, 5 s) between two
// network namespaces: over the plain veth underlay, and through each tunnel the VPN profiles
// offer, run by the sidecar's own script. `make bench-vpn` runs it; the figures are Mbit/s.
func BenchmarkTunnelThroughput(b *testing.B) {
	type path struct {
		name     string
		settings *v1alpha1.VPNSettings // nil: the plain veth underlay
	}
	cases := []path{{"veth", nil}, {"WireGuard", &v1alpha1.VPNSettings{Type: v1alpha1.VPNWireGuard}}}
	for _, c := range []string{"AES-256-GCM", "AES-128-GCM", "CHACHA20-POLY1305"} {
		cases = append(cases, path{"OpenVPN-" + c, &v1alpha1.VPNSettings{Type: v1alpha1.VPNOpenVPN, OpenVPN: &v1alpha1.OpenVPNSettings{Cipher: c}}})
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			nw := NewNetwork(b)
			a, z := nw.AddHost(b, "a"), nw.AddHost(b, "z")
			target := z.Address
			if c.settings != nil {
				plan, err := vpn.NewPlan(*c.settings, []string{"a", "z"}, []string{a.Address.String(), z.Address.String()})
				if err != nil {
					b.Fatal(err)
				}
				secret := TunnelSecret(b, plan)
				StartTunnel(b, a, plan, secret, "a")
				StartTunnel(b, z, plan, secret, "z")
				target = plan.Members[1].Address
			}
			var mbits float64
			for range b.N {
				mbits = iperf(b, a, z, target)
			}
			b.ReportMetric(mbits, "Mbit/s")
		})
	}
}

// iperf runs an iperf3 server on z and a 5-second client on a, and returns the receiver's
// Mbit/s.
func iperf(b *testing.B, a, z *Host, target netip.Addr) float64 {
	server := launch(b, "iperf3 server", z.Command("iperf3", "-s", "-B", target.String()))
	defer server.stop()
	// The first attempts may come before the tunnel has finished its handshake.
	var out []byte
	var err error
	for attempt := 0; attempt < 10; attempt++ {
		time.Sleep(time.Second)
		if out, err = a.Command("iperf3", "-c", target.String(), "-t", "5", "-J", "--connect-timeout", "3000").Output(); err == nil {
			break
		}
	}
	if err != nil {
		b.Fatalf("iperf3 to %s: %v\n%s\n%s", target, err, out, server.Log())
	}
	var res struct {
		End struct {
			SumReceived struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		b.Fatalf("iperf3 output: %v\n%s", err, out)
	}
	return res.End.SumReceived.BitsPerSecond / 1e6
}
