package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/persist"
	"github.com/tableconform/conform/reference/tableserver"
)

func init() { extraCommands = append(extraCommands, serveCmd) }

func serveCmd() *cobra.Command {
	var addr string
	var accounts []string
	var allowAnonymous, oauth bool
	var deleteHold time.Duration
	var dataDir string
	var repair bool
	var snapshotEvery int
	var pprofAddr string
	var flavor string
	var ruPerSecond int
	var closers []func() error
	var useTLS bool
	var tlsDir, certFile, keyFile string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the in-memory reference over the Table REST protocol until interrupted",
		Long: `Serve the reference over the Table REST protocol, in memory, until interrupted. It knows
the development account (devstoreaccount1 with its well-known key) and any account given
with --account NAME:BASE64KEY (or NAME:env:VARIABLE, NAME:file:PATH for a key kept out of
the command line), and accepts Shared Key, Shared Key Lite, service and account
SAS, and with --oauth bearer tokens for the storage audience. Table ACLs, service
properties, statistics (on <account>-secondary) and CORS are served too.
Any SDK can use the printed connection strings, one per account, as it would use Azurite's;
a key read from a variable or a file is shown as <from env:VARIABLE> or <from file:PATH>.

Each account is a namespace of its own, as on Azure: its tables, table ACLs and service
properties are its alone. Requests name the account in the path (path style,
http://127.0.0.1:10002/devstoreaccount1/Tables) or as the first label of the Host (host
style, Host: devstoreaccount1.table.core.windows.net, as production URLs do).

With --tls it serves https (HTTP/1.1), so that SAS tokens signed with spr=https and clients
that require https work: the certificate is generated for localhost, *.localhost,
*.table.localhost, 127.0.0.1 and ::1 and signed by a local CA that --tls-dir keeps across
restarts; the CA may sign only those names, so trusting its ca.pem trusts nothing else.
--cert and --key serve a certificate of your own instead. The printed connection string
then uses https.

With --data DIR the data survives restarts: every acknowledged write is in a write-ahead
log in DIR (fsync'd before the answer; one record per transaction, so none is ever half
applied) and snapshots are taken periodically and on exit (see reference/persist); the
accounts given with --account keep theirs in DIR/accounts/NAME; table ACLs and service
properties are kept there too (settings.json, with a checksum, fsync'd before the answer), and
DIR/data.json names the accounts DIR keeps, so that a settings.json or an accounts/NAME folder
missing later is refused, not taken for an empty account. A torn last record (a write
a crash cut short, never acknowledged) is cut with a warning; any other damage (a bad record
that intact ones follow, a missing snapshot or log) stops serve with a message naming it,
and --repair then moves the damaged files into DIR/damaged-<time> (of the directory
damaged) and starts from what comes before the first damage, naming the intact changes after
it that it no longer serves; ` + "`conform data export DIR/damaged-<time> OUT-DIR`" + ` writes those as
JSON lines, one file per table. On a full disk reads go on and writes answer 503
ServerBusy.

With --flavor cosmos it answers as recorded Cosmos DB for Table traffic does (docs/EVIDENCE.md),
where Cosmos's answers changed over time in the era named: x-ms-request-id on every answer
(2021 to April 2022; none from November 2022), 429 TooManyRequests without a retry-after header
(November 2022), entities listed in the order of their last writes and tables in an order
that is neither their names' nor their creation's.

Listening beyond loopback (--addr :PORT) is warned about: the development account's key is
public, so anyone who can reach the port can read and change the data.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var opts []tableserver.Option
			var extra []serveAccount
			seen := map[string]bool{}
			for _, arg := range accounts {
				a, err := parseServeAccount(arg)
				if err != nil {
					return err
				}
				if seen[a.name] || a.name == tableserver.DevAccountName {
					return usageErr("--account %s is given twice", a.name)
				}
				seen[a.name] = true
				extra = append(extra, a)
			}
			switch {
			case flavor != tableserver.FlavorStorage && flavor != tableserver.FlavorCosmos:
				return usageErr("--flavor must be %s or %s, not %q", tableserver.FlavorStorage, tableserver.FlavorCosmos, flavor)
			case ruPerSecond < 0:
				return usageErr("--cosmos-ru-per-second must be 0 (no budget) or more, not %d", ruPerSecond)
			case ruPerSecond > 0 && flavor != tableserver.FlavorCosmos:
				return usageErr("--cosmos-ru-per-second needs --flavor cosmos")
			}
			if allowAnonymous {
				opts = append(opts, tableserver.WithAllowAnonymous())
			}
			if oauth {
				opts = append(opts, tableserver.WithOAuth())
			}
			if pprofAddr != "" {
				stopProfiles, err := serveProfiles(cmd.ErrOrStderr(), pprofAddr)
				if err != nil {
					return err
				}
				defer stopProfiles()
			}
			if repair && dataDir == "" {
				return usageErr("--repair needs --data DIR")
			}
			var served servedTLS
			if useTLS || certFile != "" || keyFile != "" {
				var err error
				if served, err = loadServeTLS(tlsDir, certFile, keyFile, time.Now()); err != nil {
					return usageErr("--tls: %v", err)
				}
				for _, note := range served.notes {
					fmt.Fprintln(cmd.ErrOrStderr(), note)
				}
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return usageErr("listen on %s: %v", addr, err)
			}
			if w := exposureWarning(ln.Addr()); w != "" {
				fmt.Fprintln(cmd.ErrOrStderr(), w)
			}
			// Each account is a namespace of its own (E-account-namespace): its own backend,
			// and with --data its own directory.
			serviceOpts := []reference.Option{reference.WithDeleteHold(deleteHold)}
			if flavor == tableserver.FlavorCosmos {
				serviceOpts = append(serviceOpts, reference.CosmosOptions()...)
			}
			openBackend := func(dir string) (api.Backend, int, error) {
				if dataDir == "" {
					return reference.New(serviceOpts...), 0, nil
				}
				popts := []persist.Option{persist.WithServiceOptions(serviceOpts...), persist.WithLog(cmd.ErrOrStderr())}
				if repair {
					popts = append(popts, persist.WithRepair())
				}
				if snapshotEvery > 0 {
					popts = append(popts, persist.WithSnapshotEvery(snapshotEvery))
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
				closers = append(closers, store.Close)
				if st := store.Stats(); st.Dropped.Changes > 0 {
					fmt.Fprintf(cmd.ErrOrStderr(), "conform serve: `conform data export %s OUT-DIR` writes those changes as JSON lines, one file per table\n", st.SetAside)
				}
				return store, store.Stats().Tables, nil
			}
			// With --data an account's table ACLs and service properties are kept in its
			// directory too (settings.json): they are acknowledged writes like any other.
			warn := func(line string) { fmt.Fprintln(cmd.ErrOrStderr(), line) }
			var manifest dataManifest
			if dataDir != "" {
				var err error
				if manifest, err = loadDataManifest(dataDir, repair, warn); err != nil {
					_ = ln.Close()
					return usageErr("--data: %v", err)
				}
			}
			keepSettings := func(account, dir string, b api.Backend) error {
				if dataDir == "" {
					return nil
				}
				settings, err := loadSettings(dir, b, manifest.has(account), repair, warn)
				if err != nil {
					return err
				}
				opts = append(opts, tableserver.WithSettings(account, settings, settingsKeeper{dir: dir}))
				return nil
			}
			defer func() {
				for _, c := range closers {
					_ = c()
				}
			}()
			started := time.Now()
			backend, restored, err := openBackend(dataDir)
			if err == nil {
				err = keepSettings(tableserver.DevAccountName, dataDir, backend)
			}
			if err != nil {
				_ = ln.Close()
				return usageErr("--data: %v", err)
			}
			for _, a := range extra {
				dir := filepath.Join(dataDir, "accounts", a.name)
				if dataDir != "" {
					if err := checkAccountDir(manifest, a.name, dir, repair, warn); err != nil {
						_ = ln.Close()
						return usageErr("--data: account %s: %v", a.name, err)
					}
				}
				b, tables, err := openBackend(dir)
				if err == nil {
					opts = append(opts, tableserver.WithAccount(a.name, a.key, b))
					err = keepSettings(a.name, dir, b)
				}
				if err != nil {
					_ = ln.Close()
					return usageErr("--data: account %s: %v", a.name, err)
				}
				restored += tables
			}
			if dataDir != "" {
				manifest.add(tableserver.DevAccountName)
				for _, a := range extra {
					manifest.add(a.name)
				}
				if err := writeChecksummed(dataDir, dataManifestFile, manifest); err != nil {
					_ = ln.Close()
					return usageErr("--data: %v", err)
				}
			}
			where := "in memory"
			if dataDir != "" {
				tables := "tables"
				if restored == 1 {
					tables = "table"
				}
				where = fmt.Sprintf("data in %s: %d %s restored in %v", dataDir, restored, tables, time.Since(started).Round(time.Millisecond))
			}
			server := tableserver.New(backend, opts...)
			srv := server.HTTPServer(addr)
			if flavor == tableserver.FlavorCosmos {
				cosmos := tableserver.NewCosmos(server, tableserver.WithRequestUnitsPerSecond(ruPerSecond))
				srv.Handler = cosmos
				where += ", " + cosmos.String()
			}
			scheme := "http"
			if served.config != nil {
				scheme = "https"
				srv.TLSConfig = served.config
				// HTTP/1.1 only, as the Table service speaks it.
				srv.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){}
				ln = tls.NewListener(ln, served.config)
			} else {
				// The framing check reads the plain bytes; under TLS http.Server must see the
				// *tls.Conn itself (r.TLS, which an spr=https SAS needs), so it is left out.
				ln = tableserver.Listener(ln)
			}
			base := scheme + "://" + ln.Addr().String()
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "conform serve: the reference on %s (%s; Ctrl-C stops it)\n", base, where)
			switch {
			case served.caFile != "":
				fmt.Fprintf(out, "TLS: certificate %s for localhost, *.localhost, *.table.localhost, 127.0.0.1 and ::1, signed by the local CA %s: trust that file (SSL_CERT_FILE, NODE_EXTRA_CA_CERTS, REQUESTS_CA_BUNDLE)\n", served.certFile, served.caFile)
			case served.certFile != "":
				fmt.Fprintf(out, "TLS: certificate %s\n", served.certFile)
			}
			fmt.Fprintf(out, "DefaultEndpointsProtocol=%s;AccountName=%s;AccountKey=%s;TableEndpoint=%s/%s;\n",
				scheme, tableserver.DevAccountName, tableserver.DevAccountKey, base, tableserver.DevAccountName)
			for _, a := range extra {
				fmt.Fprintln(out, a.connectionString(scheme, base))
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			errc := make(chan error, 1)
			go func() { errc <- srv.Serve(ln) }()
			select {
			case err := <-errc:
				if !errors.Is(err, http.ErrServerClosed) {
					return fmt.Errorf("serve: %w", err)
				}
			case <-ctx.Done():
				sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				_ = srv.Shutdown(sctx)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:10002", "address to listen on")
	cmd.Flags().StringArrayVar(&accounts, "account", nil, "an extra account as NAME:BASE64KEY, NAME:env:VARIABLE or NAME:file:PATH (repeatable)")
	cmd.Flags().BoolVar(&allowAnonymous, "allow-anonymous", false, "accept requests without credentials")
	cmd.Flags().BoolVar(&oauth, "oauth", false, "accept OAuth bearer tokens: a well-formed, unexpired JWT for "+tableserver.StorageAudience+" (the signature is not checked; for local development only)")
	cmd.Flags().StringVar(&dataDir, "data", "", "keep the data in this directory across restarts (default: in memory only)")
	cmd.Flags().IntVar(&snapshotEvery, "snapshot-every", persist.DefaultSnapshotEvery, "with --data: take a snapshot after this many logged writes")
	cmd.Flags().BoolVar(&repair, "repair", false, "with --data: start from a damaged directory, its damaged files moved into DIR/damaged-<time>")
	cmd.Flags().StringVar(&pprofAddr, "pprof", "", "serve Go's profiles (net/http/pprof) on this loopback address, e.g. 127.0.0.1:6060 (default: off)")
	cmd.Flags().StringVar(&flavor, "flavor", tableserver.FlavorStorage, "answer as Azure Table Storage (storage) or as recorded Cosmos DB for Table traffic does (cosmos)")
	cmd.Flags().IntVar(&ruPerSecond, "cosmos-ru-per-second", 0, "with --flavor cosmos: answer 429 TooManyRequests as recorded (no retry-after header) past this many request units a second per account (one per request; 0: no budget)")
	cmd.Flags().BoolVar(&useTLS, "tls", false, "serve https with a certificate for the loopback names, signed by a local CA kept in --tls-dir (printed: trust its ca.pem)")
	cmd.Flags().StringVar(&tlsDir, "tls-dir", "", "where --tls keeps its CA and certificate (default: conform/tls in the user's configuration directory)")
	cmd.Flags().StringVar(&certFile, "cert", "", "serve https with this PEM certificate (with --key) instead of a generated one")
	cmd.Flags().StringVar(&keyFile, "key", "", "the PEM private key of --cert")
	cmd.Flags().DurationVar(&deleteHold, "delete-hold", 2*time.Second, "how long a deleted table's name answers 409 TableBeingDeleted")
	return cmd
}

// validAccountName reports whether name is a storage account name: 3 to 24 lower-case
// letters and digits.
func validAccountName(name string) bool {
	if len(name) < 3 || len(name) > 24 {
		return false
	}
	for _, c := range name {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// exposureWarning is the one line serve prints when it listens beyond loopback: every
// server accepts the development account, whose key is public.
func exposureWarning(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || tcp.IP.IsLoopback() {
		return ""
	}
	return fmt.Sprintf("conform serve: warning: listening on %s, beyond this machine, with the development account's public key: anyone who can reach it can read and change the data (use --addr 127.0.0.1:PORT to stay local)", a)
}

// testDiskFullEnv names a file while which every write to the --data directory fails as on
// a full disk (ENOSPC, through persist.WithFaults). The soak test (soak_test.go) fills the
// disk this way: mounting a small filesystem needs privileges.
const testDiskFullEnv = "CONFORM_TEST_DISK_FULL_WHILE"

func diskFullWhile(mark string) func(persist.FileOp, string) error {
	return func(op persist.FileOp, file string) error {
		if op != persist.OpWrite && op != persist.OpCreate {
			return nil
		}
		if _, err := os.Stat(mark); err == nil {
			return &os.PathError{Op: string(op), Path: file, Err: syscall.ENOSPC}
		}
		return nil
	}
}
