package framework

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/tableconform/conform/fixtures"
)

// backendTarget is one selected backend: opened lazily by the first spec that needs it,
// closed when the suite ends.
type backendTarget struct {
	arg  string
	name string
	cfg  *Config

	once     sync.Once
	target   *Target
	openErr  error
	baseline fixtures.Baseline
}

// OpenTimeout bounds the start of a backend (Azurite's first start installs it from npm).
const OpenTimeout = 5 * time.Minute

func (t *backendTarget) open() (*Target, error) {
	t.once.Do(func() {
		if t.cfg.Open == nil {
			t.openErr = fmt.Errorf("backend %s: no opener configured", t.name)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), OpenTimeout)
		defer cancel()
		t.target, t.openErr = t.cfg.Open(ctx, t.arg)
		if t.openErr != nil {
			return
		}
		if t.target.Info.Name == "" {
			t.target.Info.Name = t.name
		}
		if !t.cfg.IgnoreBaselines {
			t.baseline, t.openErr = fixtures.LoadBaseline(t.cfg.BaselineDir, t.target.Info.Name, t.target.Info.Version)
		}
	})
	return t.target, t.openErr
}

func (t *backendTarget) close() error {
	if t.target != nil && t.target.Close != nil {
		return t.target.Close()
	}
	return nil
}
