package persist

// abandon drops the Store as a killed process would: no snapshot, no flush beyond what
// was written, the directory released. A snapshot being written is let finish first, so
// that nothing writes the directory after it is released.
func (s *Store) abandon() {
	s.mu.Lock()
	s.closed = true
	done := s.snapDone
	s.mu.Unlock()
	if done != nil {
		err := <-done
		done <- err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = s.wal.Close()
	_ = s.lock.Close()
}
