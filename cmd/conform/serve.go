package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tableconform/conform/reference/persist"
	"github.com/tableconform/conform/reference/tableserver"
)

func init() { extraCommands = append(extraCommands, serveCmd) }

// serveFlags are the flags of conform serve.
type serveFlags struct {
	addr                      string
	accounts                  []string
	allowAnonymous, oauth     bool
	deleteHold                time.Duration
	dataDir                   string
	repair                    bool
	snapshotEvery             int
	pprofAddr                 string
	flavor                    string
	ruPerSecond               int
	useTLS                    bool
	tlsDir, certFile, keyFile string
}

func serveCmd() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the in-memory reference over the Table REST protocol until interrupted",
		Long:  serveLong,
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runServe(cmd, &f) },
	}
	f.register(cmd.Flags())
	return cmd
}

const serveLong = `Serve the reference over the Table REST protocol, in memory, until interrupted. It knows
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
public, so anyone who can reach the port can read and change the data.`

// register defines the flags on fs.
func (f *serveFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.addr, "addr", "127.0.0.1:10002", "address to listen on")
	fs.StringArrayVar(&f.accounts, "account", nil, "an extra account as NAME:BASE64KEY, NAME:env:VARIABLE or NAME:file:PATH (repeatable)")
	fs.BoolVar(&f.allowAnonymous, "allow-anonymous", false, "accept requests without credentials")
	fs.BoolVar(&f.oauth, "oauth", false, "accept OAuth bearer tokens: a well-formed, unexpired JWT for "+tableserver.StorageAudience+" (the signature is not checked; for local development only)")
	fs.StringVar(&f.dataDir, "data", "", "keep the data in this directory across restarts (default: in memory only)")
	fs.IntVar(&f.snapshotEvery, "snapshot-every", persist.DefaultSnapshotEvery, "with --data: take a snapshot after this many logged writes")
	fs.BoolVar(&f.repair, "repair", false, "with --data: start from a damaged directory, its damaged files moved into DIR/damaged-<time>")
	fs.StringVar(&f.pprofAddr, "pprof", "", "serve Go's profiles (net/http/pprof) on this loopback address, e.g. 127.0.0.1:6060 (default: off)")
	fs.StringVar(&f.flavor, "flavor", tableserver.FlavorStorage, "answer as Azure Table Storage (storage) or as recorded Cosmos DB for Table traffic does (cosmos)")
	fs.IntVar(&f.ruPerSecond, "cosmos-ru-per-second", 0, "with --flavor cosmos: answer 429 TooManyRequests as recorded (no retry-after header) past this many request units a second per account (one per request; 0: no budget)")
	fs.BoolVar(&f.useTLS, "tls", false, "serve https with a certificate for the loopback names, signed by a local CA kept in --tls-dir (printed: trust its ca.pem)")
	fs.StringVar(&f.tlsDir, "tls-dir", "", "where --tls keeps its CA and certificate (default: conform/tls in the user's configuration directory)")
	fs.StringVar(&f.certFile, "cert", "", "serve https with this PEM certificate (with --key) instead of a generated one")
	fs.StringVar(&f.keyFile, "key", "", "the PEM private key of --cert")
	fs.DurationVar(&f.deleteHold, "delete-hold", 2*time.Second, "how long a deleted table's name answers 409 TableBeingDeleted")
}

// runServe serves until interrupted: it checks the flags, starts the profiles, loads the TLS
// certificate, listens, opens each account's backend (and data directory), announces the
// endpoint and its connection strings, and serves until a signal stops it.
func runServe(cmd *cobra.Command, f *serveFlags) error {
	stderr := cmd.ErrOrStderr()
	extra, err := f.extraAccounts()
	if err != nil {
		return err
	}
	if err := f.checkFlavor(); err != nil {
		return err
	}
	var opts []tableserver.Option
	if f.allowAnonymous {
		opts = append(opts, tableserver.WithAllowAnonymous())
	}
	if f.oauth {
		opts = append(opts, tableserver.WithOAuth())
	}
	if f.pprofAddr != "" {
		stopProfiles, err := serveProfiles(stderr, f.pprofAddr)
		if err != nil {
			return err
		}
		defer stopProfiles()
	}
	if f.repair && f.dataDir == "" {
		return usageErr("--repair needs --data DIR")
	}
	served, err := f.loadTLS(stderr)
	if err != nil {
		return err
	}
	ln, err := listenServe(f.addr, stderr)
	if err != nil {
		return err
	}
	data, err := openServeData(f, stderr)
	if err != nil {
		_ = ln.Close()
		return err
	}
	defer data.close()
	started := time.Now()
	backend, restored, err := data.openAccounts(extra)
	if err != nil {
		_ = ln.Close()
		return err
	}
	opts = append(opts, data.opts...)
	where := "in memory"
	if f.dataDir != "" {
		tables := "tables"
		if restored == 1 {
			tables = "table"
		}
		where = fmt.Sprintf("data in %s: %d %s restored in %v", f.dataDir, restored, tables, time.Since(started).Round(time.Millisecond))
	}
	server := tableserver.New(backend, opts...)
	srv := server.HTTPServer(f.addr)
	if f.flavor == tableserver.FlavorCosmos {
		cosmos := tableserver.NewCosmos(server, tableserver.WithRequestUnitsPerSecond(f.ruPerSecond))
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
	announceServe(cmd.OutOrStdout(), scheme+"://"+ln.Addr().String(), scheme, where, served, extra)
	return serveUntilSignalled(cmd.Context(), srv, ln)
}

// extraAccounts parses --account: each name once, and never the development account's.
func (f *serveFlags) extraAccounts() ([]serveAccount, error) {
	var extra []serveAccount
	seen := map[string]bool{}
	for _, arg := range f.accounts {
		a, err := parseServeAccount(arg)
		if err != nil {
			return nil, err
		}
		if seen[a.name] || a.name == tableserver.DevAccountName {
			return nil, usageErr("--account %s is given twice", a.name)
		}
		seen[a.name] = true
		extra = append(extra, a)
	}
	return extra, nil
}

// checkFlavor checks --flavor and --cosmos-ru-per-second.
func (f *serveFlags) checkFlavor() error {
	switch {
	case f.flavor != tableserver.FlavorStorage && f.flavor != tableserver.FlavorCosmos:
		return usageErr("--flavor must be %s or %s, not %q", tableserver.FlavorStorage, tableserver.FlavorCosmos, f.flavor)
	case f.ruPerSecond < 0:
		return usageErr("--cosmos-ru-per-second must be 0 (no budget) or more, not %d", f.ruPerSecond)
	case f.ruPerSecond > 0 && f.flavor != tableserver.FlavorCosmos:
		return usageErr("--cosmos-ru-per-second needs --flavor cosmos")
	}
	return nil
}

// loadTLS loads or makes the certificate of --tls, --cert and --key, and prints its notes
// to log; without those flags it serves plain http (a zero servedTLS).
func (f *serveFlags) loadTLS(log io.Writer) (servedTLS, error) {
	if !f.useTLS && f.certFile == "" && f.keyFile == "" {
		return servedTLS{}, nil
	}
	served, err := loadServeTLS(f.tlsDir, f.certFile, f.keyFile, time.Now())
	if err != nil {
		return servedTLS{}, usageErr("--tls: %v", err)
	}
	for _, note := range served.notes {
		fmt.Fprintln(log, note)
	}
	return served, nil
}

// listenServe listens on addr, warning on log when that is beyond loopback.
func listenServe(addr string, log io.Writer) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, usageErr("listen on %s: %v", addr, err)
	}
	if w := exposureWarning(ln.Addr()); w != "" {
		fmt.Fprintln(log, w)
	}
	return ln, nil
}

// announceServe prints where the reference serves, its certificate, and one connection
// string per account.
func announceServe(out io.Writer, base, scheme, where string, served servedTLS, extra []serveAccount) {
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
}

// serveUntilSignalled serves srv on ln until SIGINT or SIGTERM (or ctx's end), then shuts it
// down gracefully, in at most 5 s.
func serveUntilSignalled(ctx context.Context, srv *http.Server, ln net.Listener) error {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
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
