package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/tableserver"
)

// settingsFile is where `conform serve --data` keeps an account's table ACLs and service
// properties (tableserver.Settings, as JSON), in the account's data directory beside its
// tables' log and snapshot.
const settingsFile = "settings.json"

// settingsKeeper keeps an account's Settings in dir: each change is written to a new file,
// fsync'd, renamed over the old one and the directory fsync'd, before it is answered.
type settingsKeeper struct{ dir string }

func (k settingsKeeper) SaveSettings(_ string, s tableserver.Settings) error {
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	tmp := filepath.Join(k.dir, settingsFile+".tmp")
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(k.dir, settingsFile)); err != nil {
		return err
	}
	d, err := os.Open(k.dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// loadSettings reads the Settings kept in dir, without the ACLs of tables backend does not
// hold (a table deleted by a process killed before it could drop them). A file that does
// not decode is refused; with repair it is moved aside (settings.json.damaged-<time>) and
// the account starts without settings.
func loadSettings(dir string, backend api.Backend, repair bool, warn func(string)) (tableserver.Settings, error) {
	var s tableserver.Settings
	path := filepath.Join(dir, settingsFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(data, &s); err != nil {
		if !repair {
			return s, fmt.Errorf("%s is damaged (%v): --repair moves it aside and starts the account without its table ACLs and service properties", path, err)
		}
		aside := path + ".damaged-" + time.Now().UTC().Format("20060102T150405Z")
		if err := os.Rename(path, aside); err != nil {
			return s, err
		}
		warn(fmt.Sprintf("conform serve: %s was damaged (%v) and is kept as %s; the account starts without table ACLs and service properties", path, err, aside))
		return tableserver.Settings{}, nil
	}
	for table := range s.ACLs {
		page, err := backend.QueryTables(context.Background(), api.TableQuery{Filter: "TableName eq '" + strings.ReplaceAll(table, "'", "''") + "'"})
		if err != nil {
			return s, err
		}
		found := false
		for _, t := range page.Tables {
			found = found || strings.EqualFold(t, table)
		}
		if !found {
			delete(s.ACLs, table)
		}
	}
	return s, nil
}
