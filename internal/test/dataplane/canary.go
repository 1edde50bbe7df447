package dataplane

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"secured.dev/operator/pkg/fieldcrypt"
)

// Marker returns a value no capture contains by chance, to write through a real client.
func Marker(t testing.TB) string {
	t.Helper()
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "canary-" + hex.EncodeToString(b)
}

// Capture records the TCP traffic to and from the ports on the loopback interface with
// tcpdump while fn runs, and returns the raw pcap. It is the confidentiality canary's eye: a
// marker written through the real client must be absent from the capture of an encrypted
// channel and present in that of a plaintext one.
func Capture(t testing.TB, ports []int, fn func()) []byte {
	t.Helper()
	filter := make([]string, len(ports))
	for i, p := range ports {
		filter[i] = fmt.Sprintf("tcp port %d", p)
	}
	return capture(t, nil, "lo", strings.Join(filter, " or "), fn)
}

// capture runs tcpdump on the interface (behind the command prefix, such as ip netns exec)
// while fn runs and returns the raw pcap.
func capture(t testing.TB, prefix []string, iface, filter string, fn func()) []byte {
	t.Helper()
	tcpdump, err := exec.LookPath("tcpdump")
	if err != nil {
		t.Fatalf("the confidentiality canary needs tcpdump (make prereqs installs it): %v", err)
	}
	file := filepath.Join(t.TempDir(), "capture.pcap")
	// --immediate-mode: packets reach tcpdump as they arrive, not when a kernel buffer block
	// fills or times out, so stopping it right after fn loses nothing. -Z root: tcpdump would
	// otherwise drop to its own user, who cannot write the test's private temporary directory.
	args := append(prefix, tcpdump, "-i", iface, "--immediate-mode", "-U", "-n", "-s", "0", "-Z", "root", "-w", file, filter)
	cmd := exec.Command(args[0], args[1:]...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	listening := make(chan string, 2)
	go func() {
		s := bufio.NewScanner(stderr)
		var seen []string
		for s.Scan() {
			seen = append(seen, s.Text())
			if strings.Contains(s.Text(), "listening on") {
				listening <- ""
			}
		}
		listening <- strings.Join(seen, "\n")
	}()
	select {
	case msg := <-listening:
		if msg != "" {
			_ = cmd.Wait()
			t.Fatalf("tcpdump stopped before capturing (capturing needs CAP_NET_RAW): %s", msg)
		}
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatal("tcpdump did not start listening in 10s")
	}

	fn()
	time.Sleep(500 * time.Millisecond) // let the last segments reach the capture
	_ = cmd.Process.Signal(syscall.SIGINT)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Packet is what the canary needs of a captured IPv4 packet.
type Packet struct {
	Protocol         uint8 // 6 TCP, 17 UDP
	SrcPort, DstPort uint16
	Payload          int // bytes after the TCP or UDP header
}

// Packets decodes the IPv4 TCP and UDP packets of an Ethernet pcap (what Capture returns);
// other frames are skipped.
func Packets(pcap []byte) []Packet {
	var out []Packet
	for off := 24; off+16 <= len(pcap); {
		n := int(binary.LittleEndian.Uint32(pcap[off+8:]))
		frame := pcap[off+16 : min(off+16+n, len(pcap))]
		off += 16 + n
		if len(frame) < 34 || binary.BigEndian.Uint16(frame[12:]) != 0x0800 {
			continue
		}
		ip := frame[14:]
		ihl := int(ip[0]&0x0f) * 4
		if len(ip) < ihl+8 || (ip[9] != 6 && ip[9] != 17) {
			continue
		}
		l4 := ip[ihl:]
		hdr := 8
		if ip[9] == 6 && len(l4) >= 13 {
			hdr = int(l4[12]>>4) * 4
		}
		total := int(binary.BigEndian.Uint16(ip[2:]))
		out = append(out, Packet{Protocol: ip[9], SrcPort: binary.BigEndian.Uint16(l4), DstPort: binary.BigEndian.Uint16(l4[2:]), Payload: max(total-ihl-hdr, 0)})
	}
	return out
}

// OnDisk lists the files under dir whose bytes hold marker in clear: the on-disk canary's eye,
// as Capture is the wire canary's. A marker written through the real client must be absent from
// the files a profile encrypts at rest and present in those it does not.
func OnDisk(t testing.TB, dir, marker string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), marker) {
			found = append(found, path)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("searching %s for the marker: %v", dir, err)
	}
	return found
}

// ClientKeys writes newly drawn client-side keys into a directory, as the operator's
// <datastore>-client-keys Secret holds them mounted, and returns it.
func ClientKeys(t testing.TB, c fieldcrypt.Cipher, s fieldcrypt.Signature) string {
	t.Helper()
	files, err := fieldcrypt.GenerateKeys(c, 32, s)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// OnDevice reports whether marker is anywhere on the device image, read as the disk holds it:
// in files, in free blocks, in the journal.
func OnDevice(t testing.TB, image, marker string) bool {
	t.Helper()
	f, err := os.Open(image)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := []byte(marker)
	buf := make([]byte, 4<<20)
	kept := 0 // the tail of the last read, where a marker may have begun
	for {
		n, err := f.Read(buf[kept:])
		filled := kept + n
		if bytes.Contains(buf[:filled], want) {
			return true
		}
		if err == io.EOF {
			return false
		}
		if err != nil {
			t.Fatalf("reading %s: %v", image, err)
		}
		kept = min(len(want)-1, filled)
		copy(buf, buf[filled-kept:filled])
	}
}
