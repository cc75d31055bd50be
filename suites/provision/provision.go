package provision

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver"
)

// The built-in backend names accepted by Open.
const (
	Reference     = "reference"
	ReferenceHTTP = "reference-http"
	// Model is reference/model, the naive model of the service, in process.
	Model = "model"
	// ReferenceCosmos is the reference behind the Cosmos DB for Table flavour of its server.
	ReferenceCosmos = "reference-cosmos"
	Azurite         = "azurite"
	AzuriteLegacy   = "azurite-legacy"
	AzuriteDocker   = "azurite-docker"
)

// The remote drivers WithDriver accepts.
const (
	DriverREST = "rest"
	DriverSDK  = "sdk"
)

// Target is an opened backend.
type Target struct {
	// Backend is ready for use until Close.
	Backend api.Backend
	// Info describes the backend for reports; its Endpoint carries no credential.
	Info driver.Info
	// Close stops whatever Open started (a server, a process, a container). It is safe to
	// call more than once.
	Close func() error
	// LogPath is the file that holds a started emulator's output; empty otherwise.
	LogPath string
}

// Name is one built-in backend name with a one-line description, for the CLI.
type Name struct {
	Name        string
	Description string
}

// Names lists the built-in backend names, in the order a help text shows them. Any other
// target is given as NAME=CONNECTION_STRING.
func Names() []Name {
	return []Name{
		{Reference, "the in-memory reference model, in process"},
		{Model, "the naive model of the service (reference/model: maps and a sort per query), in process"},
		{ReferenceHTTP, "the reference behind its HTTP server on a free loopback port"},
		{ReferenceCosmos, "the reference behind its HTTP server answering as Cosmos DB for Table (--profile cosmos)"},
		{Azurite, "Azurite " + azuriteCurrent.version + " from the repository's npm lock, as a local in-memory process"},
		{AzuriteLegacy, "the deprecated Azurite " + azuriteLegacy.version + " line from npm, as a local process"},
		{AzuriteDocker, "Azurite " + azuriteCurrent.version + " in a container through testcontainers (needs a Docker engine)"},
		{AzuritePrefix + "VERSION", "any published Azurite 3.x, installed from npm into conform's cache directory ($" + CacheDirEnv + ")"},
		{"NAME=" + ImagePrefix + "REF[,port=P][,account=A][,key=env:VAR][,style=path|host][,args=ARGS]", "any container image that serves the Table API, started through testcontainers (needs a Docker engine)"},
		{"NAME=" + ExecPrefix + "COMMAND", "any local server, started with " + PortPlaceholder + " in COMMAND replaced by a free loopback port"},
		{"NAME=CONNECTION_STRING", "any endpoint (Azure Storage, Cosmos DB for Table, another emulator) by its connection string"},
	}
}

// Option configures Open and InstallNodeTools.
type Option func(*config)

type config struct {
	driver         string
	directSender   bool
	root           string
	startTimeout   time.Duration
	installTimeout time.Duration
	probeTimeout   time.Duration
	dockerImage    string
	httpClient     *http.Client
	cacheDir       string
	progress       func(string)
	logDir         string
}

func defaults() config {
	return config{
		driver:         DriverREST,
		startTimeout:   30 * time.Second,
		installTimeout: 5 * time.Minute,
		probeTimeout:   10 * time.Second,
		dockerImage:    "mcr.microsoft.com/azure-storage/azurite:" + azuriteCurrent.version,
	}
}

// WithDriver chooses how conform talks to an HTTP backend: DriverREST (raw HTTP, the
// default) or DriverSDK (the aztables SDK). It has no effect on "reference".
func WithDriver(name string) Option { return func(c *config) { c.driver = name } }

// WithDirectSender lets the REST driver send with its hand-written sender where it can
// (rest.WithDirectSender): for load runs only, never for conformance verdicts.
func WithDirectSender() Option { return func(c *config) { c.directSender = true } }

// WithRoot names the repository root that holds package.json and package-lock.json. The
// default is $CONFORM_ROOT, else the nearest directory above the working directory that
// holds go.mod and package.json, else the root this package was built from.
func WithRoot(dir string) Option { return func(c *config) { c.root = dir } }

// WithCacheDir names conform's cache directory, where azurite@VERSION (and, outside a
// checkout, the pinned Azurite) is installed; the default is CacheDir("").
func WithCacheDir(dir string) Option { return func(c *config) { c.cacheDir = dir } }

// WithProgress receives lines that say what a long Open is doing (an npm install), at
// least every 30 seconds while it lasts.
func WithProgress(say func(line string)) Option { return func(c *config) { c.progress = say } }

// WithStartTimeout bounds how long a started server may take to answer (default 30 s; an
// exec: command gets at least 3 minutes, for a command that compiles first).
func WithStartTimeout(d time.Duration) Option { return func(c *config) { c.startTimeout = d } }

// WithLogDir names the folder where a server conform starts from a description (image:,
// exec:) writes its output, NAME.server.log; by default a temporary folder, kept when the
// server fails to start.
func WithLogDir(dir string) Option { return func(c *config) { c.logDir = dir } }

// WithProbeTimeout bounds the first request Open sends to a NAME=CONNECTION_STRING
// endpoint to check that it answers (default 10 s).
func WithProbeTimeout(d time.Duration) Option { return func(c *config) { c.probeTimeout = d } }

// WithHTTPClient makes the REST and SDK drivers send every request through c (conform run
// --record wraps its Transport). It has no effect on "reference", which is not reached over
// HTTP.
func WithHTTPClient(c *http.Client) Option { return func(cfg *config) { cfg.httpClient = c } }

// WithDockerImage overrides the container image of "azurite-docker".
func WithDockerImage(ref string) Option { return func(c *config) { c.dockerImage = ref } }

// Error is Open's failure: the backend's name and the cause, one line, no secret.
type Error struct {
	Backend string
	Err     error
}

func (e *Error) Error() string {
	return e.Backend + ": " + oneLine(driver.MaskSecrets(e.Err.Error()))
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Open starts or connects the backend named target and returns it ready for use. target is
// one of the names of Names, or NAME=CONNECTION_STRING. ctx bounds the whole of Open,
// including an npm install; the returned Target outlives it.
func Open(ctx context.Context, target string, opts ...Option) (*Target, error) {
	cfg := defaults()
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.driver != DriverREST && cfg.driver != DriverSDK {
		return nil, &Error{Backend: target, Err: fmt.Errorf("unknown driver %q (want %q or %q)", cfg.driver, DriverREST, DriverSDK)}
	}
	var (
		t   *Target
		err error
	)
	name := target
	switch target {
	case Reference:
		t, err = openReference(ctx)
	case Model:
		t, err = openModel(ctx)
	case ReferenceHTTP:
		t, err = openReferenceHTTP(ctx, cfg)
	case ReferenceCosmos:
		t, err = openReferenceCosmos(ctx, cfg)
	case Azurite:
		t, err = openAzurite(ctx, cfg, azuriteCurrent)
	case AzuriteLegacy:
		t, err = openAzurite(ctx, cfg, azuriteLegacy)
	case AzuriteDocker:
		t, err = openDocker(ctx, cfg)
	default:
		if version, ok, verr := azuriteVersionOf(target); ok {
			if verr != nil {
				return nil, &Error{Backend: target, Err: verr}
			}
			t, err = openAzurite(ctx, cfg, azuriteAt(version))
			break
		}
		if StartsServer(target) {
			name = strings.TrimSpace(strings.SplitN(target, "=", 2)[0])
			t, err = openStarted(ctx, cfg, target)
			break
		}
		n, cs, ok := strings.Cut(target, "=")
		if !ok || strings.TrimSpace(n) == "" || strings.TrimSpace(cs) == "" {
			return nil, &Error{Backend: redact(target, target), Err: fmt.Errorf("unknown backend (want one of %s, or NAME=CONNECTION_STRING)", builtinList())}
		}
		name = strings.TrimSpace(n)
		cs, err = connectionString(strings.TrimSpace(cs))
		if err != nil {
			return nil, &Error{Backend: name, Err: err}
		}
		t, err = openEndpoint(ctx, cfg, name, cs)
		if err != nil {
			err = errors.New(redact(err.Error(), cs))
		}
	}
	if err != nil {
		var de *DockerUnavailableError
		if errors.As(err, &de) || errors.Is(err, ErrDockerHostUnsafe) || errors.Is(err, ErrDockerImageMissing) {
			return nil, err // one line that names the backend already
		}
		return nil, &Error{Backend: name, Err: err}
	}
	return t, nil
}

// EnvPrefix marks a connection string given by the name of the environment variable that
// holds it (NAME=env:VARIABLE), so that it appears on no command line and in no report.
const EnvPrefix = "env:"

// connectionString returns cs, or the value of the variable that cs names as env:VARIABLE.
func connectionString(cs string) (string, error) {
	variable, ok := strings.CutPrefix(cs, EnvPrefix)
	if !ok {
		return cs, nil
	}
	value := strings.TrimSpace(os.Getenv(variable))
	if value == "" {
		return "", fmt.Errorf("the environment variable %s that should hold the connection string is empty or unset", variable)
	}
	return value, nil
}

func builtinList() string {
	var names []string
	for _, n := range Names() {
		if !strings.Contains(n.Name, "=") {
			names = append(names, n.Name)
		}
	}
	return strings.Join(names, ", ")
}

// roundTrip checks that b serves the Table API: a table is created, an entity inserted,
// read back, queried and the table deleted. Open uses it where a backend may start but
// not work (the legacy emulator).
func roundTrip(ctx context.Context, b api.Backend) error {
	table := fmt.Sprintf("conformprobe%d", time.Now().UnixNano()%1_000_000_000)
	if err := b.CreateTable(ctx, table); err != nil {
		return fmt.Errorf("create table: %w", err)
	}
	defer func() { _ = b.DeleteTable(context.WithoutCancel(ctx), table) }()
	want := api.NewEntity("probe", "1", map[string]api.Value{"n": api.Int32(7)})
	if _, err := b.InsertEntity(ctx, table, want); err != nil {
		return fmt.Errorf("insert entity: %w", err)
	}
	got, err := b.GetEntity(ctx, table, "probe", "1", nil)
	if err != nil {
		return fmt.Errorf("get entity: %w", err)
	}
	if v, ok := got.Properties["n"]; !ok || !v.Equal(api.Int32(7)) {
		return fmt.Errorf("get entity: read back %s, want %s", got, want)
	}
	page, err := b.QueryEntities(ctx, table, api.Query{Filter: "PartitionKey eq 'probe'"})
	if err != nil {
		return fmt.Errorf("query entities: %w", err)
	}
	if len(page.Entities) != 1 {
		return fmt.Errorf("query entities: %d entities, want 1", len(page.Entities))
	}
	return nil
}

// oneLine folds a multi-line message (the SDK's errors span many lines) into one.
func oneLine(s string) string {
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' })
	for i := range fields {
		fields[i] = strings.TrimSpace(fields[i])
	}
	var kept []string
	for _, f := range fields {
		if f != "" && strings.Trim(f, "-") != "" {
			kept = append(kept, f)
		}
	}
	return strings.Join(kept, " | ")
}
