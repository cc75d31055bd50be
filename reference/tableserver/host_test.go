package tableserver

import "testing"

// hostOf answers for each Host as its first reading did, whichever Host came before.
func TestHostOfAnswersEachHost(t *testing.T) {
	s := New(nil)
	cases := []struct {
		hostPort, host string
		ip             bool
	}{
		{"127.0.0.1:10002", "127.0.0.1", true},
		{"devstoreaccount1.table.core.windows.net", "devstoreaccount1.table.core.windows.net", false},
		{"[::1]:443", "::1", true},
		{"localhost:10002", "localhost", false},
		{"", "", false},
	}
	for range 2 {
		for _, c := range cases {
			for range 2 { // read, then kept
				if host, ip := s.hostOf(c.hostPort); host != c.host || ip != c.ip {
					t.Errorf("hostOf(%q) = %q, %v, want %q, %v", c.hostPort, host, ip, c.host, c.ip)
				}
			}
		}
	}
}
