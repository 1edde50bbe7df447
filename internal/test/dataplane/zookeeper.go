package dataplane

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"time"
)

// ZooKeeperReadCode opens a ZooKeeper session at addr without authenticating, as anyone who
// reaches the port could, asks for the root's children and returns ZooKeeper's error code for
// that request: 0 when it answered, -124 (SESSIONCLOSEDREQUIRESASLAUTH) when the server
// demands Kerberos first. It speaks the wire protocol itself (jute, big-endian, each message
// prefixed by its length), so the test needs no client library that might authenticate on its
// own.
func ZooKeeperReadCode(addr string) (int32, error) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return 0, err
	}
	defer func() { _ = conn.Close() }()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))

	var connect bytes.Buffer
	for _, v := range []any{int32(0), int64(0), int32(10000), int64(0), int32(16), make([]byte, 16), false} {
		_ = binary.Write(&connect, binary.BigEndian, v) // protocol version, last zxid, timeout, session, password, read-only
	}
	if err := sendFrame(conn, connect.Bytes()); err != nil {
		return 0, err
	}
	if _, err := receiveFrame(conn); err != nil {
		return 0, fmt.Errorf("no session: %w", err)
	}

	var list bytes.Buffer
	for _, v := range []any{int32(1), int32(8), int32(1), []byte("/"), false} {
		_ = binary.Write(&list, binary.BigEndian, v) // xid, getChildren, path "/", no watch
	}
	if err := sendFrame(conn, list.Bytes()); err != nil {
		return 0, err
	}
	reply, err := receiveFrame(conn)
	if err != nil {
		return 0, fmt.Errorf("no reply to getChildren: %w", err)
	}
	if len(reply) < 16 {
		return 0, fmt.Errorf("a reply of %d bytes is shorter than its header", len(reply))
	}
	return int32(binary.BigEndian.Uint32(reply[12:16])), nil // after xid and zxid
}

func sendFrame(w io.Writer, msg []byte) error {
	_, err := w.Write(binary.BigEndian.AppendUint32(nil, uint32(len(msg))))
	if err == nil {
		_, err = w.Write(msg)
	}
	return err
}

func receiveFrame(r io.Reader) ([]byte, error) {
	var n uint32
	if err := binary.Read(r, binary.BigEndian, &n); err != nil {
		return nil, err
	}
	if n > 1<<20 {
		return nil, fmt.Errorf("a message of %d bytes: not ZooKeeper", n)
	}
	msg := make([]byte, n)
	_, err := io.ReadFull(r, msg)
	return msg, err
}
