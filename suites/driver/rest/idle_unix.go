//go:build unix

package rest

import (
	"net"
	"syscall"
)

// idleConnAlive reports whether an idle connection is still open and silent: the server
// has not closed it (a read would see EOF) nor sent anything unasked. It peeks without
// blocking, so that a request is never written into a connection the server has already
// closed (net/http watches each idle connection with a goroutine for the same purpose).
func idleConnAlive(nc net.Conn) bool {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return true
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	alive := false
	var buf [1]byte
	if err := raw.Control(func(fd uintptr) {
		n, _, rerr := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		alive = n < 0 && (rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK)
	}); err != nil {
		return false
	}
	return alive
}
