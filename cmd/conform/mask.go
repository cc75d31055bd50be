package main

import (
	"bytes"
	"io"
	"sync"

	"github.com/tableconform/conform/suites/driver"
)

// maskedLines writes what it is given to w a line at a time, every secret in each line
// masked (driver.MaskSecrets), so that a signature split across two writes is masked too.
// Flush writes the last, unterminated line.
type maskedLines struct {
	mu      sync.Mutex
	w       io.Writer
	pending []byte
}

func newMaskedLines(w io.Writer) *maskedLines { return &maskedLines{w: w} }

func (m *maskedLines) Write(p []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pending = append(m.pending, p...)
	end := bytes.LastIndexByte(m.pending, '\n')
	if end < 0 {
		return len(p), nil
	}
	if _, err := io.WriteString(m.w, driver.MaskSecrets(string(m.pending[:end+1]))); err != nil {
		return 0, err
	}
	m.pending = append(m.pending[:0], m.pending[end+1:]...)
	return len(p), nil
}

// Flush writes the line that no newline ended yet.
func (m *maskedLines) Flush() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.pending) == 0 {
		return nil
	}
	_, err := io.WriteString(m.w, driver.MaskSecrets(string(m.pending)))
	m.pending = m.pending[:0]
	return err
}
