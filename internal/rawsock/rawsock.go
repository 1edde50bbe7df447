// Package rawsock gives a TCP connection reads and writes that are plain system calls on its
// non-blocking socket, made without the Go scheduler's system-call bookkeeping.
//
// Why: a benchmark client at a fixed rate goes idle between operations, and every system call
// a goroutine enters while the runtime is idle wakes the runtime's monitor thread, which then
// polls every 20 µs until the process is idle again. At 1,800 operations per second that
// was 4,000 wake-ups a second, and on a virtual machine a context switch costs more than the
// operation's own work: the monitor's sleeps alone took a fifth of the client's CPU (perf,
// make bench-client's fixed-rate case). A read or write on a non-blocking socket never blocks,
// so it needs none of that bookkeeping; when the socket is not ready the call goes back to the
// netpoller through syscall.RawConn, as the standard library's own reads and writes do.
package rawsock

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// Conn returns c with raw reads and writes when it is a TCP connection, and c unchanged
// otherwise. Deadlines, Close and the addresses are the TCP connection's own.
func Conn(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	return &conn{TCPConn: tc, raw: raw}
}

type conn struct {
	*net.TCPConn
	raw syscall.RawConn
}

func (c *conn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	var n uintptr
	var errno syscall.Errno
	err := c.raw.Read(func(fd uintptr) bool {
		for {
			n, _, errno = syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
			switch errno {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // wait in the netpoller until the socket is readable
			}
			return true
		}
	})
	switch {
	case err != nil: // closed, or past the read deadline
		return 0, err
	case errno != 0:
		return 0, &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError("read", errno)}
	case n == 0:
		return 0, io.EOF
	}
	return int(n), nil
}

// Write writes all of b, waiting in the netpoller whenever the socket's buffer is full.
// MSG_NOSIGNAL: a peer that hung up gives EPIPE, not a signal.
func (c *conn) Write(b []byte) (int, error) {
	var written int
	var errno syscall.Errno
	err := c.raw.Write(func(fd uintptr) bool {
		for written < len(b) {
			n, _, e := syscall.RawSyscall6(syscall.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&b[written])), uintptr(len(b)-written), syscall.MSG_NOSIGNAL, 0, 0)
			switch e {
			case 0:
				written += int(n)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false
			default:
				errno = e
				return true
			}
		}
		return true
	})
	if err == nil && errno != 0 {
		err = &net.OpError{Op: "write", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError("write", errno)}
	}
	return written, err
}
