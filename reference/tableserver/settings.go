package tableserver

import (
	"github.com/tableconform/conform/reference/spec"
)

// Settings is what a Server keeps of an account itself, beside the tables its backend
// holds: the tables' stored access policies (by lower-case table name) and the service
// properties.
type Settings struct {
	ACLs       map[string][]SignedIdentifier `json:"acls,omitempty"`
	Properties *ServiceProperties            `json:"properties,omitempty"`
}

// SettingsKeeper keeps an account's Settings across restarts (`conform serve --data`).
type SettingsKeeper interface {
	// SaveSettings durably replaces the account's kept Settings with s.
	SaveSettings(account string, s Settings) error
}

// WithSettings starts the account with s (what its keeper kept) and has keeper keep every
// change of its Settings before the change is answered: a change keeper fails to keep is
// undone and answered 503 ServerBusy, as a write the data directory cannot take is
// (EVIDENCE.md 9).
func WithSettings(account string, s Settings, keeper SettingsKeeper) Option {
	return func(srv *Server) {
		for table, ids := range s.ACLs {
			srv.acls[aclKey{account, table}] = ids
		}
		if s.Properties != nil {
			p := *s.Properties
			srv.props[account] = &p
		}
		if keeper != nil {
			if srv.keepers == nil {
				srv.keepers = map[string]SettingsKeeper{}
			}
			srv.keepers[account] = keeper
		}
	}
}

// changeSettings runs change, which changes the account's ACLs or properties and returns
// what undoes it, then has the account's keeper keep the result; when it cannot, the change
// is undone and refused with 503 ServerBusy. Changes are kept one at a time, in order.
func (s *Server) changeSettings(account string, change func() (undo func())) error {
	s.settingsMu.Lock()
	defer s.settingsMu.Unlock()
	undo := change()
	k := s.keepers[account]
	if k == nil {
		return nil
	}
	if err := k.SaveSettings(account, s.settingsOf(account)); err != nil {
		undo()
		e := spec.ErrServerBusy.New()
		e.Message += "\nThe change could not be kept in the data directory (is the disk full?); it was not applied."
		return e
	}
	return nil
}

// settingsOf returns the account's Settings as they are now.
func (s *Server) settingsOf(account string) Settings {
	out := Settings{ACLs: map[string][]SignedIdentifier{}}
	s.aclMu.Lock()
	for k, ids := range s.acls {
		if k.account == account {
			out.ACLs[k.table] = ids
		}
	}
	s.aclMu.Unlock()
	s.propsMu.Lock()
	if p := s.props[account]; p != nil {
		c := *p
		out.Properties = &c
	}
	s.propsMu.Unlock()
	return out
}

// dropACL removes the stored access policies of a deleted table, and has the account's
// keeper keep that when there were any. The table is gone whatever happens: should keeping
// fail, the policies stay kept until the next start drops those of tables that do not exist
// (conform serve).
func (s *Server) dropACL(key aclKey) {
	s.settingsMu.Lock()
	defer s.settingsMu.Unlock()
	s.aclMu.Lock()
	_, had := s.acls[key]
	delete(s.acls, key)
	s.aclMu.Unlock()
	if k := s.keepers[key.account]; k != nil && had {
		_ = k.SaveSettings(key.account, s.settingsOf(key.account))
	}
}

// setACL replaces the stored access policies of the table of key, kept by the account's
// keeper.
func (s *Server) setACL(key aclKey, ids []SignedIdentifier) error {
	return s.changeSettings(key.account, func() func() {
		s.aclMu.Lock()
		defer s.aclMu.Unlock()
		old, had := s.acls[key]
		s.acls[key] = ids
		return func() {
			s.aclMu.Lock()
			defer s.aclMu.Unlock()
			if had {
				s.acls[key] = old
			} else {
				delete(s.acls, key)
			}
		}
	})
}

// setProperties overlays the sections p sends on the account's properties, kept by the
// account's keeper.
func (s *Server) setProperties(account string, p ServiceProperties) error {
	return s.changeSettings(account, func() func() {
		s.propsMu.Lock()
		defer s.propsMu.Unlock()
		old, had := s.props[account]
		cur := &ServiceProperties{}
		if had {
			*cur = *old
		}
		if p.Logging != nil {
			cur.Logging = p.Logging
		}
		if p.HourMetrics != nil {
			cur.HourMetrics = p.HourMetrics
		}
		if p.MinuteMetrics != nil {
			cur.MinuteMetrics = p.MinuteMetrics
		}
		if p.Cors != nil {
			cur.Cors = p.Cors
		}
		s.props[account] = cur
		return func() {
			s.propsMu.Lock()
			defer s.propsMu.Unlock()
			if had {
				s.props[account] = old
			} else {
				delete(s.props, account)
			}
		}
	})
}
