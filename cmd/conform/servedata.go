package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/persist"
	"github.com/tableconform/conform/reference/tableserver"
)

// serveData opens the backends of conform serve's accounts: in memory, or with --data in
// the data directory, where each account is a namespace of its own (E-account-namespace)
// with a directory of its own, and its table ACLs and service properties are kept too
// (settings.json): they are acknowledged writes like any other.
type serveData struct {
	flags       *serveFlags
	log         io.Writer
	serviceOpts []reference.Option
	manifest    dataManifest
	// opts are the server options the opened accounts need: WithAccount and WithSettings.
	opts    []tableserver.Option
	closers []func() error
}

// openServeData reads the data directory's manifest, when serve has one.
func openServeData(f *serveFlags, log io.Writer) (*serveData, error) {
	d := &serveData{flags: f, log: log, serviceOpts: []reference.Option{reference.WithDeleteHold(f.deleteHold)}}
	if f.flavor == tableserver.FlavorCosmos {
		d.serviceOpts = append(d.serviceOpts, reference.CosmosOptions()...)
	}
	if f.dataDir != "" {
		var err error
		if d.manifest, err = loadDataManifest(f.dataDir, f.repair, d.warn); err != nil {
			return nil, usageErr("--data: %v", err)
		}
	}
	return d, nil
}

func (d *serveData) warn(line string) { fmt.Fprintln(d.log, line) }

// close closes the stores opened.
func (d *serveData) close() {
	for _, c := range d.closers {
		_ = c()
	}
}

// openAccounts opens the development account's backend, which it returns, and each extra
// account's, and records in the data directory's manifest the accounts it keeps; restored
// is how many tables the data directory held.
func (d *serveData) openAccounts(extra []serveAccount) (backend api.Backend, restored int, err error) {
	dataDir := d.flags.dataDir
	backend, restored, err = d.openBackend(dataDir)
	if err == nil {
		err = d.keepSettings(tableserver.DevAccountName, dataDir, backend)
	}
	if err != nil {
		return nil, 0, usageErr("--data: %v", err)
	}
	for _, a := range extra {
		dir := filepath.Join(dataDir, "accounts", a.name)
		if dataDir != "" {
			if err := checkAccountDir(d.manifest, a.name, dir, d.flags.repair, d.warn); err != nil {
				return nil, 0, usageErr("--data: account %s: %v", a.name, err)
			}
		}
		b, tables, err := d.openBackend(dir)
		if err == nil {
			d.opts = append(d.opts, tableserver.WithAccount(a.name, a.key, b))
			err = d.keepSettings(a.name, dir, b)
		}
		if err != nil {
			return nil, 0, usageErr("--data: account %s: %v", a.name, err)
		}
		restored += tables
	}
	if dataDir != "" {
		d.manifest.add(tableserver.DevAccountName)
		for _, a := range extra {
			d.manifest.add(a.name)
		}
		if err := writeChecksummed(dataDir, dataManifestFile, d.manifest); err != nil {
			return nil, 0, usageErr("--data: %v", err)
		}
	}
	return backend, restored, nil
}

// openBackend opens one account's backend, kept in dir with --data, and says how many
// tables it restored.
func (d *serveData) openBackend(dir string) (api.Backend, int, error) {
	f := d.flags
	if f.dataDir == "" {
		return reference.New(d.serviceOpts...), 0, nil
	}
	popts := []persist.Option{persist.WithServiceOptions(d.serviceOpts...), persist.WithLog(d.log)}
	if f.repair {
		popts = append(popts, persist.WithRepair())
	}
	if f.snapshotEvery > 0 {
		popts = append(popts, persist.WithSnapshotEvery(f.snapshotEvery))
	}
	if mark := os.Getenv(testDiskFullEnv); mark != "" {
		popts = append(popts, persist.WithFaults(diskFullWhile(mark)))
	}
	store, err := persist.Open(dir, popts...)
	if err != nil {
		var de *persist.DamageError
		if errors.As(err, &de) {
			return nil, 0, fmt.Errorf("%w. Nothing was changed; --repair moves the damaged files into %s and starts from what is intact", err, filepath.Join(dir, "damaged-<time>"))
		}
		return nil, 0, err
	}
	d.closers = append(d.closers, store.Close)
	if st := store.Stats(); st.Dropped.Changes > 0 {
		fmt.Fprintf(d.log, "conform serve: `conform data export %s OUT-DIR` writes those changes as JSON lines, one file per table\n", st.SetAside)
	}
	return store, store.Stats().Tables, nil
}

// keepSettings keeps an account's table ACLs and service properties in dir, with --data.
func (d *serveData) keepSettings(account, dir string, b api.Backend) error {
	if d.flags.dataDir == "" {
		return nil
	}
	settings, err := loadSettings(dir, b, d.manifest.has(account), d.flags.repair, d.warn)
	if err != nil {
		return err
	}
	d.opts = append(d.opts, tableserver.WithSettings(account, settings, settingsKeeper{dir: dir}))
	return nil
}
