package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/signal"
	"path/filepath"
	"strings"
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
	var pprofAddr string
	var closers []func() error
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the in-memory reference over the Table REST protocol until interrupted",
		Long: `Serve the reference over the Table REST protocol, in memory, until interrupted. It knows
the development account (devstoreaccount1 with its well-known key) and any account given
with --account NAME:BASE64KEY, and accepts Shared Key, Shared Key Lite, service and account
SAS, and with --oauth bearer tokens for the storage audience. Table ACLs, service
properties, statistics (on <account>-secondary) and CORS are served too.
Any SDK can use the printed connection string as it would use Azurite's.

Each account is a namespace of its own, as on Azure: its tables, table ACLs and service
properties are its alone. Requests name the account in the path (path style,
http://127.0.0.1:10002/devstoreaccount1/Tables) or as the first label of the Host (host
style, Host: devstoreaccount1.table.core.windows.net, as production URLs do).

With --data DIR the data survives restarts: every acknowledged write is in a write-ahead
log in DIR (fsync'd before the answer; one record per transaction, so none is ever half
applied) and snapshots are taken periodically and on exit (see reference/persist); the
accounts given with --account keep theirs in DIR/accounts/NAME.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var opts []tableserver.Option
			var names []string
			keys := map[string][]byte{}
			for _, a := range accounts {
				name, key, ok := strings.Cut(a, ":")
				decoded, err := base64.StdEncoding.DecodeString(key)
				if !ok || !validAccountName(name) || err != nil || len(decoded) == 0 {
					return usageErr("--account wants NAME:BASE64KEY, NAME 3 to 24 lower-case letters and digits (the key is not printed)")
				}
				if _, dup := keys[name]; dup || name == tableserver.DevAccountName {
					return usageErr("--account %s is given twice", name)
				}
				keys[name] = decoded
				names = append(names, name)
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
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return usageErr("listen on %s: %v", addr, err)
			}
			// Each account is a namespace of its own (E-account-namespace): its own backend,
			// and with --data its own directory.
			openBackend := func(dir string) (api.Backend, int, error) {
				if dataDir == "" {
					return reference.New(reference.WithDeleteHold(deleteHold)), 0, nil
				}
				store, err := persist.Open(dir, persist.WithServiceOptions(reference.WithDeleteHold(deleteHold)))
				if err != nil {
					return nil, 0, err
				}
				closers = append(closers, store.Close)
				return store, store.Stats().Tables, nil
			}
			defer func() {
				for _, c := range closers {
					_ = c()
				}
			}()
			started := time.Now()
			backend, restored, err := openBackend(dataDir)
			if err != nil {
				_ = ln.Close()
				return usageErr("--data: %v", err)
			}
			for _, n := range names {
				b, tables, err := openBackend(filepath.Join(dataDir, "accounts", n))
				if err != nil {
					_ = ln.Close()
					return usageErr("--data: account %s: %v", n, err)
				}
				restored += tables
				opts = append(opts, tableserver.WithAccount(n, keys[n], b))
			}
			where := "in memory"
			if dataDir != "" {
				where = fmt.Sprintf("data in %s: %d tables restored in %v", dataDir, restored, time.Since(started).Round(time.Millisecond))
			}
			srv := tableserver.New(backend, opts...).HTTPServer(addr)
			base := "http://" + ln.Addr().String()
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "conform serve: the reference on %s (%s; Ctrl-C stops it)\n", base, where)
			fmt.Fprintf(out, "DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;TableEndpoint=%s/%s;\n",
				tableserver.DevAccountName, tableserver.DevAccountKey, base, tableserver.DevAccountName)
			for _, n := range names {
				fmt.Fprintf(out, "account %s: TableEndpoint=%s/%s (key as given)\n", n, base, n)
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
	cmd.Flags().StringArrayVar(&accounts, "account", nil, "an extra account as NAME:BASE64KEY (repeatable)")
	cmd.Flags().BoolVar(&allowAnonymous, "allow-anonymous", false, "accept requests without credentials")
	cmd.Flags().BoolVar(&oauth, "oauth", false, "accept OAuth bearer tokens: a well-formed, unexpired JWT for "+tableserver.StorageAudience+" (the signature is not checked; for local development only)")
	cmd.Flags().StringVar(&dataDir, "data", "", "keep the data in this directory across restarts (default: in memory only)")
	cmd.Flags().StringVar(&pprofAddr, "pprof", "", "serve Go's profiles (net/http/pprof) on this loopback address, e.g. 127.0.0.1:6060 (default: off)")
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
