package provision

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tableconform/conform/internal/buildinfo"
	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/model"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/reference/tableserver"
	"github.com/tableconform/conform/reference/wire"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/driver/inproc"
	"github.com/tableconform/conform/suites/driver/rest"
	"github.com/tableconform/conform/suites/driver/sdk"
)

func openReference(ctx context.Context) (*Target, error) {
	b := inproc.New()
	info := b.Info()
	info.Name, info.Kind = Reference, Reference
	// Specs of the protocol and of shared access signatures need HTTP requests; the
	// in-process reference answers them through its own server on a loopback port, over
	// the same model.
	endpoint, stop, err := serveReference(ctx, b.Service())
	if err != nil {
		return nil, fmt.Errorf("backend %s: %w", Reference, err)
	}
	r, err := rest.New(devConnectionString(endpoint))
	if err != nil {
		_ = stop()
		return nil, fmt.Errorf("backend %s: %w", Reference, err)
	}
	return &Target{Backend: &inprocWithProtocol{Backend: b, RawHTTP: r, SASIssuer: r}, Info: info, Close: stop}, nil
}

// inprocWithProtocol is the in-process reference plus the raw-HTTP and SAS capabilities of
// its server.
type inprocWithProtocol struct {
	*inproc.Backend
	driver.RawHTTP
	driver.SASIssuer
}

// openModel starts the naive model (reference/model) in process, with the raw-HTTP and SAS
// capabilities of the reference's server over the same model, as openReference does.
func openModel(ctx context.Context) (*Target, error) {
	m := model.New()
	info := driver.Info{Name: Model, Kind: Model, Driver: "inproc", Version: "conform " + buildinfo.Current().String()}
	endpoint, stop, err := serveReference(ctx, m)
	if err != nil {
		return nil, fmt.Errorf("backend %s: %w", Model, err)
	}
	r, err := rest.New(devConnectionString(endpoint))
	if err != nil {
		_ = stop()
		return nil, fmt.Errorf("backend %s: %w", Model, err)
	}
	return &Target{Backend: &modelWithProtocol{Model: m, RawHTTP: r, SASIssuer: r, info: info}, Info: info, Close: stop}, nil
}

// modelWithProtocol is the model plus the raw-HTTP and SAS capabilities of the server
// over it.
type modelWithProtocol struct {
	*model.Model
	driver.RawHTTP
	driver.SASIssuer
	info driver.Info
}

// Info describes the model for reports.
func (b *modelWithProtocol) Info() driver.Info { return b.info }

func devConnectionString(endpoint string) string {
	return "DefaultEndpointsProtocol=http;AccountName=" + tableserver.DevAccountName + ";AccountKey=" + tableserver.DevAccountKey + ";TableEndpoint=" + endpoint + ";"
}

// serveReference serves backend with tableserver on a free loopback port and returns the
// development account's table endpoint and the function that stops the server.
func serveReference(ctx context.Context, backend api.Backend) (string, func() error, error) {
	return serveFlavored(ctx, backend, tableserver.FlavorStorage)
}

// serveFlavored is serveReference with the server speaking flavor (tableserver.FlavorStorage
// or FlavorCosmos).
func serveFlavored(ctx context.Context, backend api.Backend, flavor string) (string, func() error, error) {
	l, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("listen on loopback: %w", err)
	}
	server := tableserver.New(backend)
	srv := server.HTTPServer(l.Addr().String())
	if flavor == tableserver.FlavorCosmos {
		srv.Handler = tableserver.NewCosmos(server)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(tableserver.Listener(l)) }()
	var once sync.Once
	var closeErr error
	stop := func() error {
		once.Do(func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			closeErr = srv.Shutdown(sctx)
			if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) && closeErr == nil {
				closeErr = err
			}
		})
		return closeErr
	}
	return fmt.Sprintf("http://%s/%s", l.Addr().String(), tableserver.DevAccountName), stop, nil
}

// openReferenceHTTP serves a fresh reference model with tableserver on a free loopback
// port and connects to it with the remote driver, as the development account.
func openReferenceHTTP(ctx context.Context, cfg config) (*Target, error) {
	endpoint, stop, err := serveReference(ctx, reference.New())
	if err != nil {
		return nil, err
	}
	info := driver.Info{Name: ReferenceHTTP, Kind: ReferenceHTTP, Version: tableserver.ServerHeader, Endpoint: endpoint}
	b, info, err := remoteBackend(cfg, devConnectionString(endpoint), info)
	if err != nil {
		_ = stop()
		return nil, err
	}
	return &Target{Backend: b, Info: info, Close: stop}, nil
}

// openReferenceCosmos serves a fresh reference model with the Cosmos flavour of tableserver
// on a free loopback port and connects to it with the remote driver.
func openReferenceCosmos(ctx context.Context, cfg config) (*Target, error) {
	model := reference.New(reference.CosmosOptions()...)
	endpoint, stop, err := serveFlavored(ctx, model, tableserver.FlavorCosmos)
	if err != nil {
		return nil, err
	}
	info := driver.Info{Name: ReferenceCosmos, Kind: ReferenceCosmos, Version: tableserver.ServerHeader + " (cosmos flavour)", Endpoint: endpoint}
	b, info, err := remoteBackend(cfg, devConnectionString(endpoint), info)
	if err != nil {
		_ = stop()
		return nil, err
	}
	return &Target{Backend: b, Info: info, Close: stop}, nil
}

// openEndpoint connects to any endpoint by its connection string and checks with one Query
// Tables request that it answers and accepts the credentials.
func openEndpoint(ctx context.Context, cfg config, name, cs string) (*Target, error) {
	parsed, err := wire.ParseConnectionString(cs)
	if err != nil {
		return nil, err
	}
	info := driver.Info{Name: name, Kind: "endpoint", Endpoint: parsed.TableEndpoint}
	b, info, err := remoteBackend(cfg, cs, info)
	if err != nil {
		return nil, err
	}
	// The probe is retried as the SDKs retry (driver.DefaultRetry): a reset or a throttled
	// answer says nothing about whether the endpoint can be tested; a refused connection (nothing
	// listens) fails at once. Each attempt has its own probe timeout.
	probe := func(ctx context.Context) error {
		pctx, cancel := context.WithTimeout(ctx, cfg.probeTimeout)
		defer cancel()
		_, err := b.QueryTables(pctx, api.TableQuery{Top: 1})
		return err
	}
	err = probe(ctx)
	if err != nil && !errors.Is(err, syscall.ECONNREFUSED) && driver.Retryable(ctx, err) {
		// Nothing listening fails at once; anything else retryable is tried again.
		err, _ = driver.DefaultRetry.Retry(ctx, probe, nil)
	}
	if err != nil {
		if e, ok := driver.AsError(err); ok {
			answered := fmt.Sprintf("%s answered Query Tables with %d %s: %s", parsed.TableEndpoint, e.Status, e.Code, driver.MaskSecrets(e.Message))
			if e.Code == spec.ErrAuthenticationFailed.Code {
				return nil, fmt.Errorf("authentication failed: check the AccountKey (or SAS) of the connection string (%s)", answered)
			}
			return nil, errors.New(answered)
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("%s did not answer within %v: %v", parsed.TableEndpoint, cfg.probeTimeout, err)
		}
		return nil, fmt.Errorf("%s is unreachable: %v", parsed.TableEndpoint, err)
	}
	if d, ok := b.(driver.Describer); ok && info.Version == "" {
		info.Version = d.Info().Version // a Server header, once one came back
	}
	return &Target{Backend: b, Info: info, Close: func() error { return nil }}, nil
}

// remoteBackend connects to cs with the chosen driver and completes info with what the
// driver reports about itself (driver name, API version).
func remoteBackend(cfg config, cs string, info driver.Info) (api.Backend, driver.Info, error) {
	var (
		b   api.Backend
		err error
	)
	driverName := cfg.driver
	switch driverName {
	case DriverSDK:
		opts := []sdk.Option{sdk.WithInfo(info)}
		if cfg.httpClient != nil {
			opts = append(opts, sdk.WithHTTPClient(cfg.httpClient))
		}
		b, err = sdk.New(cs, opts...)
	default:
		b, err = newREST(cs, info, cfg.httpClient, cfg.directSender)
	}
	if err != nil {
		return nil, info, fmt.Errorf("%s driver: %w", driverName, err)
	}
	info.Driver = driverName
	if d, ok := b.(driver.Describer); ok {
		own := d.Info()
		if own.APIVersion != "" {
			info.APIVersion = own.APIVersion
		}
		if own.Driver != "" {
			info.Driver = own.Driver
		}
	}
	return b, info, nil
}

var sasSignature = regexp.MustCompile(`(?i)(sig=)[^&;\s"']+`)

// redact removes from msg every secret that cs holds: the account key, the SAS and any
// sig= parameter.
func redact(msg, cs string) string {
	for _, part := range strings.Split(cs, ";") {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "accountkey", "sharedaccesssignature":
			if v != "" {
				msg = strings.ReplaceAll(msg, v, "REDACTED")
			}
		}
	}
	return sasSignature.ReplaceAllString(msg, "${1}REDACTED")
}
