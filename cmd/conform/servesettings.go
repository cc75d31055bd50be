package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/tableserver"
)

// settingsFile is where `conform serve --data` keeps an account's table ACLs and service
// properties (tableserver.Settings, as JSON), in the account's data directory beside its
// tables' log and snapshot.
const settingsFile = "settings.json"

// dataManifestFile, at the top of the data directory, names the accounts whose data the
// directory keeps (the development account's at the top, another's in accounts/<name>/),
// each with its settings.json: what start-up finds missing is then known to be lost,
// never taken for an account that never had any.
const dataManifestFile = "data.json"

// checksummed is the form of settings.json and data.json: the JSON of the content and its
// CRC-32C (Castagnoli, as the log's records carry), so that a flipped bit or a file
// replaced by other JSON (`null`, `{}`) is refused rather than loaded as written.
type checksummed struct {
	CRC32C  uint32          `json:"crc32c"`
	Content json.RawMessage `json:"content"`
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// writeChecksummed durably replaces dir/name with v and its checksum: written to a new file,
// fsync'd, renamed over the old one and the directory fsync'd.
func writeChecksummed(dir, name string, v any) error {
	content, err := json.Marshal(v)
	if err != nil {
		return err
	}
	data, err := json.Marshal(checksummed{CRC32C: crc32.Checksum(content, castagnoli), Content: content})
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, name+".tmp")
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
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// errUnchecked is readChecksummed's answer to JSON that is not in the checksummed form: a
// file an older conform wrote, or one replaced by other JSON.
var errUnchecked = errors.New("it carries no checksum")

// readChecksummed decodes data, in the checksummed form, into v. It refuses a checksum that
// does not match and content that does not decode; JSON without the checksummed form is
// errUnchecked.
func readChecksummed(data []byte, v any) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return err
	}
	if _, ok := fields["crc32c"]; !ok || fields["content"] == nil {
		return errUnchecked
	}
	var c checksummed
	if err := json.Unmarshal(data, &c); err != nil {
		return err
	}
	if got := crc32.Checksum(c.Content, castagnoli); got != c.CRC32C {
		return fmt.Errorf("its checksum does not match (CRC-32C %08x, recorded %08x)", got, c.CRC32C)
	}
	return json.Unmarshal(c.Content, v)
}

// settingsKeeper keeps an account's Settings in dir: each change is written to a new file,
// fsync'd, renamed over the old one and the directory fsync'd, before it is answered.
type settingsKeeper struct{ dir string }

func (k settingsKeeper) SaveSettings(_ string, s tableserver.Settings) error {
	return writeChecksummed(k.dir, settingsFile, s)
}

// loadSettings reads the Settings kept in dir, without the ACLs of tables backend does not
// hold (a table deleted by a process killed before it could drop them), and writes them
// back in the checksummed form, so that from now on their absence is known as a loss.
//
// kept says whether the data directory's manifest says the account keeps its settings in
// dir (an account conform has served with --data since settings carry a checksum). A file
// that is damaged (a checksum that does not match, content that does not decode, or, where
// kept, JSON without a checksum) or missing where kept is refused with the file named; with
// repair a damaged file is moved aside (settings.json.damaged-<time>) and the account
// starts without settings, as it does when the file is missing. Where not kept (a
// directory an older conform wrote), a file without a checksum is read as it was written.
func loadSettings(dir string, backend api.Backend, kept, repair bool, warn func(string)) (tableserver.Settings, error) {
	var s tableserver.Settings
	path := filepath.Join(dir, settingsFile)
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && kept && !repair:
		return s, fmt.Errorf("%s is missing, though %s says the account keeps its table ACLs and service properties there: restore it, or --repair starts the account without them", path, dataManifestFile)
	case errors.Is(err, fs.ErrNotExist) && kept:
		warn(fmt.Sprintf("conform serve: %s was missing; the account starts without table ACLs and service properties", path))
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return s, err
	default:
		err := readChecksummed(data, &s)
		if errors.Is(err, errUnchecked) && !kept {
			err = json.Unmarshal(data, &s) // written before settings carried a checksum
		}
		if err != nil {
			if !repair {
				return s, fmt.Errorf("%s is damaged (%v): --repair moves it aside and starts the account without its table ACLs and service properties", path, err)
			}
			aside := path + ".damaged-" + time.Now().UTC().Format("20060102T150405Z")
			if err := os.Rename(path, aside); err != nil {
				return s, err
			}
			warn(fmt.Sprintf("conform serve: %s was damaged (%v) and is kept as %s; the account starts without table ACLs and service properties", path, err, aside))
			s = tableserver.Settings{}
		}
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
	return s, settingsKeeper{dir: dir}.SaveSettings("", s)
}

// dataManifest is data.json: the accounts whose data the directory keeps.
type dataManifest struct {
	Accounts []string `json:"accounts"`
}

// has says whether the manifest names the account.
func (m dataManifest) has(account string) bool { return slices.Contains(m.Accounts, account) }

// add names the account in the manifest.
func (m *dataManifest) add(account string) {
	if !m.has(account) {
		m.Accounts = append(m.Accounts, account)
		slices.Sort(m.Accounts)
	}
}

// loadDataManifest reads data.json of the data directory dir; a directory without one (new,
// or written by an older conform) names no account. A damaged one is refused; with repair
// it is moved aside and, like a missing one, names no account.
func loadDataManifest(dir string, repair bool, warn func(string)) (dataManifest, error) {
	var m dataManifest
	path := filepath.Join(dir, dataManifestFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return m, err
	}
	if err := readChecksummed(data, &m); err != nil {
		if !repair {
			return m, fmt.Errorf("%s is damaged (%v): --repair moves it aside and starts without knowing which accounts kept data", path, err)
		}
		aside := path + ".damaged-" + time.Now().UTC().Format("20060102T150405Z")
		if err := os.Rename(path, aside); err != nil {
			return m, err
		}
		warn(fmt.Sprintf("conform serve: %s was damaged (%v) and is kept as %s", path, err, aside))
		return dataManifest{}, nil
	}
	return m, nil
}

// checkAccountDir refuses to start an account the manifest names whose directory is
// missing (it would start empty, its data lost without a word); with repair it says so and
// the account starts empty.
func checkAccountDir(m dataManifest, account, dir string, repair bool, warn func(string)) error {
	if !m.has(account) {
		return nil
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if !repair {
		return fmt.Errorf("%s is missing, though %s says account %s keeps its data there: restore it, or --repair starts the account empty", dir, dataManifestFile, account)
	}
	warn(fmt.Sprintf("conform serve: %s was missing; account %s starts empty", dir, account))
	return nil
}
