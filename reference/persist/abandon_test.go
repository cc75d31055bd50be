package persist

// abandon drops the Store as a killed process would: no snapshot, no flush beyond what
// was written, the directory released.
func (s *Store) abandon() {
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = s.wal.Close()
	_ = s.lock.Close()
	s.closed = true
}
