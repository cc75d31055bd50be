//go:build !unix

package rest

import "net"

// idleConnAlive cannot peek without blocking here; an idle connection is taken as open
// (maxIdleReuse still bounds how long it may have been idle).
func idleConnAlive(net.Conn) bool { return true }
