package mutant

import (
	"context"
	"runtime"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
)

// Races of an emulator whose store has no lock around a read and the write it decides.
var (
	_ = define(Mutant{
		Name: "unlocked-read-modify-write",
		Description: "performs Update Entity and Merge Entity as a read of the whole entity, a check of If-Match against it, " +
			"and an unconditional write of the merged whole, without a lock: concurrent writers lose each other's updates",
		Breaks: []string{"parallel.merge.counter", "parallel.merge.disjoint", "pattern.data-series.concurrent"},
		Areas:  []spec.Area{spec.AreaParallel, spec.AreaPatterns, spec.AreaConcurrency},
		AlsoFails: map[string]string{
			"concurrency.single-winner":                 "concurrent writes that carry one ETag all pass the check when their reads come before the first write",
			"pattern.index-entities.separate-partition": "concurrent updaters of one index entity, each conditioned on the ETag it read, overwrite each other's lists",
		},
	}, func(b api.Backend) api.Backend { return &unlockedReadModifyWrite{Backend: b} }, hooks{})
)

// unlockedReadModifyWrite answers an update from a read: a missing entity or a stale
// If-Match is refused as the service refuses it, and otherwise the whole entity, the read
// one with the sent properties laid over it for a merge, is written back unconditionally.
// Between the read and the write the goroutine yields, as an emulator's request handler
// yields at each await of its store: the window is what concurrent requests make of it,
// never a sleep.
type unlockedReadModifyWrite struct{ api.Backend }

func (m *unlockedReadModifyWrite) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	cur, err := m.Backend.GetEntity(ctx, table, e.PartitionKey, e.RowKey, nil)
	if se, ok := driver.AsError(err); ok && se.Status == 403 {
		// The emulator reads its own store; a client's SAS that may update but not read
		// is not refused for the read (the update is then not raced).
		return m.Backend.UpdateEntity(ctx, table, e, mode, ifMatch)
	}
	switch {
	case err != nil && (ifMatch != "" || !isMissingEntity(err)):
		return "", err
	case err == nil && ifMatch != "" && ifMatch != api.IfMatchAny && ifMatch != cur.ETag:
		return "", spec.ErrUpdateCondition.New()
	}
	whole := e.Clone()
	if err == nil && mode == api.Merge {
		whole.Properties = cur.Clone().Properties
		for name, v := range e.Properties {
			if !v.Null {
				whole.Properties[name] = v
			}
		}
	}
	runtime.Gosched()
	return m.Backend.UpdateEntity(ctx, table, whole, api.Replace, "")
}
