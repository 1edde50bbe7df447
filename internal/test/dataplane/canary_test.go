package dataplane

import (
	"bytes"
	"io"
	"net"
	"testing"
)

// The canary sees what crosses the loopback interface in clear: its own positive control,
// without a datastore.
func TestCaptureSeesPlaintext(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			_, _ = io.Copy(io.Discard, c)
			c.Close()
		}
	}()
	marker := Marker(t)
	capture := Capture(t, []int{ln.Addr().(*net.TCPAddr).Port}, func() {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Write([]byte(marker))
		c.Close()
	})
	if !bytes.Contains(capture, []byte(marker)) {
		t.Errorf("the marker written in clear is not in the %d-byte capture", len(capture))
	}
}
