package cqlwire

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"runtime"
	"sync"
	"testing"
)

// BenchmarkExecute is what one write costs the client on top of the network: 64 callers at
// once on one connection to a peer that answers every request at once with a VOID result
// (its own cost, small and allocation-free, is included). make bench runs it.
func BenchmarkExecute(b *testing.B) {
	client, server := net.Pipe()
	go func() {
		defer server.Close()
		var wmu sync.Mutex
		h := make([]byte, headerLen)
		body := make([]byte, 64<<10)
		void := append([]byte{version | responseBit, 0, 0, 0, opResult, 0, 0, 0, 4}, 0, 0, 0, resultVoid)
		ready := append([]byte{version | responseBit, 0, 0, 0, opReady}, 0, 0, 0, 0)
		out := make([]byte, len(void))
		for {
			if _, err := io.ReadFull(server, h); err != nil {
				return
			}
			if _, err := io.ReadFull(server, body[:binary.BigEndian.Uint32(h[5:9])]); err != nil {
				return
			}
			answer := void
			if h[4] == opStartup {
				answer = ready
			}
			wmu.Lock()
			out = append(out[:0], answer...)
			out[2], out[3] = h[2], h[3]
			server.Write(out)
			wmu.Unlock()
		}
	}()
	c, err := Dial(context.Background(), "peer", Config{Dial: func(context.Context, string) (net.Conn, error) { return client, nil }})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	p := &Prepared{Query: "UPDATE t SET v = ? WHERE k = ?", id: make([]byte, 16), Params: 2}
	value := make([]byte, 100)
	b.ReportAllocs()
	b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
	b.RunParallel(func(pb *testing.PB) {
		q := &Request{Consistency: 1, Timestamp: 1, Values: [][]byte{value, []byte("user1")}}
		for pb.Next() {
			if _, err := c.Execute(context.Background(), p, q, nil); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
