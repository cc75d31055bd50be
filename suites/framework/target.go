package framework

import (
	"context"
	"fmt"
	"os"
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
	// baselineFile is the file the baseline came from (or would, when there is none);
	// baselineNote says when none matched but one exists for another version.
	baselineFile string
	baselineNote string
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
			info := t.target.Info
			t.baseline, t.baselineFile, t.baselineNote, t.openErr = fixtures.FindBaseline(t.cfg.BaselineDir, info.Name, info.Kind, info.Version)
			if t.baselineNote != "" {
				fmt.Fprintf(os.Stderr, "conform: %s\n", t.baselineNote)
			}
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
