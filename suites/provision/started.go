package provision

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/tableconform/conform/suites/driver"
)

// The prefixes of the backends conform starts itself from a description given on the
// command line: NAME=image:REF[,OPTION=VALUE...] runs a container image, NAME=exec:COMMAND
// runs a local command. Both are stopped when the run ends.
const (
	ImagePrefix = "image:"
	ExecPrefix  = "exec:"
)

// The kinds (driver.Info.Kind) of the backends conform starts from a description. Such a
// server lives for the run only, so specs may change its account-wide settings. The
// baselines of an implementation apply through the name given (azurite=image:... looks up
// azurite-VERSION.json).
const (
	KindImage = "image"
	KindExec  = "exec"
)

// PortPlaceholder is replaced, in an exec: command, by the loopback port it must serve on.
const PortPlaceholder = "{port}"

// Defaults of the image: form.
const (
	imageDefaultPort = 10002
	styleHost        = "host"
	stylePath        = "path"
)

// execStartTimeout bounds how long a command may take to answer its first request: a
// command such as `go run` compiles first.
const execStartTimeout = 3 * time.Minute

// startedForm is a parsed NAME=image:... or NAME=exec:... backend.
type startedForm struct {
	name string
	// image is the container image's reference (image: form).
	image string
	// command is the shell command line with PortPlaceholder (exec: form).
	command string
	// port is the container port that serves the Table API (image: form).
	port    int
	account string
	// keyEnv names the variable that holds the account key ("" for the emulator's
	// well-known key).
	keyEnv string
	style  string
	// args replaces the image's command (image: form).
	args []string
}

// StartsServer reports whether target is a backend conform starts from its description
// (NAME=image:... or NAME=exec:...), whatever its validity.
func StartsServer(target string) bool {
	_, value, ok := strings.Cut(target, "=")
	return ok && (strings.HasPrefix(value, ImagePrefix) || strings.HasPrefix(value, ExecPrefix))
}

// IsAzuriteVersion reports whether target asks for a published Azurite version
// (azurite@VERSION), whatever its validity.
func IsAzuriteVersion(target string) bool {
	return strings.HasPrefix(target, AzuritePrefix) && !strings.Contains(target, "=")
}

// ValidateForm checks, without starting anything, a backend of the forms this package
// starts by description: azurite@VERSION, NAME=image:... and NAME=exec:.... ok is false for
// any other target.
func ValidateForm(target string) (ok bool, err error) {
	if IsAzuriteVersion(target) {
		_, _, err := azuriteVersionOf(target)
		return true, err
	}
	if !StartsServer(target) {
		return false, nil
	}
	_, err = parseStarted(target)
	return true, err
}

// parseStarted reads NAME=image:REF[,port=P][,account=A][,key=env:VAR][,style=path|host]
// [,args=ARGS] or NAME=exec:COMMAND. args, which replaces the image's command, is split on
// spaces and comes last: it may hold commas.
func parseStarted(target string) (startedForm, error) {
	name, value, _ := strings.Cut(target, "=")
	f := startedForm{name: strings.TrimSpace(name), account: emulatorAccount, style: stylePath}
	if f.name == "" {
		return f, errors.New("the backend has no name (want NAME=image:REF or NAME=exec:COMMAND)")
	}
	if command, ok := strings.CutPrefix(value, ExecPrefix); ok {
		f.command = strings.TrimSpace(command)
		if !strings.Contains(f.command, PortPlaceholder) {
			return f, fmt.Errorf("the command must say where to listen with %s, which conform replaces with a free loopback port (e.g. %s=exec:conform serve --addr 127.0.0.1:%s)",
				PortPlaceholder, f.name, PortPlaceholder)
		}
		return f, nil
	}
	rest := strings.TrimPrefix(value, ImagePrefix)
	if before, args, ok := strings.Cut(rest, ",args="); ok {
		rest, f.args = before, strings.Fields(args)
	}
	parts := strings.Split(rest, ",")
	f.image, f.port = strings.TrimSpace(parts[0]), imageDefaultPort
	if f.image == "" {
		return f, errors.New("the image reference is empty (want NAME=image:REF, e.g. me=image:conform:local,args=serve --addr 0.0.0.0:10002)")
	}
	for _, opt := range parts[1:] {
		k, v, _ := strings.Cut(opt, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "port":
			p, err := strconv.Atoi(v)
			if err != nil || p < 1 || p > 65535 {
				return f, fmt.Errorf("port=%q is not a TCP port (1 to 65535)", v)
			}
			f.port = p
		case "account":
			if v == "" {
				return f, errors.New("account= is empty")
			}
			f.account = v
		case "key":
			variable, ok := strings.CutPrefix(v, EnvPrefix)
			if !ok || variable == "" {
				return f, errors.New("key= takes env:VARIABLE, the variable that holds the account key (a key never goes on the command line)")
			}
			f.keyEnv = variable
		case "style":
			if v != stylePath && v != styleHost {
				return f, fmt.Errorf("style=%q: want %s (the account in the path) or %s (the account in the host name)", v, stylePath, styleHost)
			}
			f.style = v
		default:
			return f, fmt.Errorf("unknown image option %q (want port=, account=, key=env:VARIABLE, style=path|host, args=)", k)
		}
	}
	return f, nil
}

// key returns the account key: the emulator's well-known one, or the named variable's.
func (f startedForm) key() (string, error) {
	if f.keyEnv == "" {
		return emulatorKey, nil
	}
	v := strings.TrimSpace(os.Getenv(f.keyEnv))
	if v == "" {
		return "", fmt.Errorf("the environment variable %s that should hold the account key is empty or unset", f.keyEnv)
	}
	return v, nil
}

// connectionString returns the connection string of the server f runs at host:port.
func (f startedForm) connectionString(host string, port int) (cs, endpoint string, err error) {
	key, err := f.key()
	if err != nil {
		return "", "", err
	}
	endpoint = fmt.Sprintf("http://%s:%d/%s", host, port, f.account)
	if f.style == styleHost {
		endpoint = fmt.Sprintf("http://%s.%s:%d", f.account, host, port)
	}
	return "DefaultEndpointsProtocol=http;AccountName=" + f.account + ";AccountKey=" + key + ";TableEndpoint=" + endpoint + ";", endpoint, nil
}

// openStarted starts the backend target describes and connects to it once it answers.
func openStarted(ctx context.Context, cfg config, target string) (*Target, error) {
	f, err := parseStarted(target)
	if err != nil {
		return nil, err
	}
	if f.command != "" {
		return openExec(ctx, cfg, f)
	}
	return openImage(ctx, cfg, f)
}

// serverLogPath is where a started server's output goes: beside the report when the
// caller named a folder for it (WithLogDir), else in workDir.
func serverLogPath(cfg config, workDir, name string) string {
	if cfg.logDir != "" {
		return filepath.Join(cfg.logDir, sanitizeFileName(name)+".server.log")
	}
	return filepath.Join(workDir, sanitizeFileName(name)+".server.log")
}

func sanitizeFileName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}

// openExec runs f.command through the shell with PortPlaceholder replaced by a free loopback
// port, in the working directory, waits until it answers, and connects to it as the
// emulator's development account. Close stops its process group.
func openExec(ctx context.Context, cfg config, f startedForm) (*Target, error) {
	var lastErr error
	for attempt := 0; attempt < startAttempts; attempt++ {
		t, err := startExecOnce(ctx, cfg, f)
		if err == nil {
			return t, nil
		}
		lastErr = err
		if !errors.Is(err, errPortTaken) {
			break
		}
	}
	return nil, lastErr
}

func startExecOnce(ctx context.Context, cfg config, f startedForm) (*Target, error) {
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("find a free loopback port: %w", err)
	}
	workDir, err := os.MkdirTemp("", "conform-exec-")
	if err != nil {
		return nil, fmt.Errorf("work directory: %w", err)
	}
	logPath := serverLogPath(cfg, workDir, f.name)
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, err
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("log file: %w", err)
	}
	line := strings.ReplaceAll(f.command, PortPlaceholder, strconv.Itoa(port))
	var cmd *exec.Cmd
	if runtime.GOOS == "windows" {
		cmd = exec.Command("cmd", "/C", line)
	} else {
		cmd = exec.Command("/bin/sh", "-c", line)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	setProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start the command: %w", err)
	}
	p := &process{cmd: cmd, port: port, logPath: logPath, workDir: workDir, logFile: logFile, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	if cfg.progress != nil {
		cfg.progress(fmt.Sprintf("started %q on 127.0.0.1:%d; waiting for its first answer (log: %s)", line, port, logPath))
	}
	if err := p.waitReady(ctx, max(cfg.startTimeout, execStartTimeout)); err != nil {
		p.keepDir = true
		_ = p.close()
		if errors.Is(err, errPortTaken) {
			return nil, err
		}
		return nil, fmt.Errorf("the command %q %v", line, err)
	}
	cs, endpoint, err := f.connectionString("127.0.0.1", port)
	if err != nil {
		_ = p.close()
		return nil, err
	}
	t, err := openEndpoint(ctx, cfg, f.name, cs)
	if err != nil {
		p.keepDir = true
		_ = p.close()
		return nil, fmt.Errorf("the command %q answers on %s but not as a Table endpoint: %w; log: %s", line, endpoint, err, logPath)
	}
	t.Info.Kind = KindExec
	t.Close, t.LogPath = p.close, logPath
	return t, nil
}

// openImage runs f.image through testcontainers-go, waits for its port and a first answer,
// and connects to it. Its output is written beside the report when the caller named a
// folder (WithLogDir), and to a kept file named in the error when it fails to start.
func openImage(ctx context.Context, cfg config, f startedForm) (t *Target, err error) {
	host, err := checkDocker(ctx, f.name)
	if err != nil {
		return nil, err
	}
	if err := checkLocalImage(ctx, host, f.name, f.image); err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			t, err = nil, fmt.Errorf("testcontainers: %v", r)
		}
	}()
	runCtx, cancel := context.WithTimeout(ctx, cfg.installTimeout)
	defer cancel()
	if cfg.progress != nil {
		cfg.progress(fmt.Sprintf("starting a container of %s (pulled first when the engine lacks it); waiting for port %d and a first answer", f.image, f.port))
	}
	exposed := fmt.Sprintf("%d/tcp", f.port)
	ctr, err := testcontainers.GenericContainer(runCtx, testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{
			Image:        f.image,
			ExposedPorts: []string{exposed},
			Cmd:          f.args,
			WaitingFor:   wait.ForExposedPort().SkipInternalCheck().WithStartupTimeout(cfg.startTimeout),
		},
		Started: true,
	})
	saveLogs := func(path string) string { return saveContainerLog(ctr, path) }
	terminate := func() error { return terminateContainer(ctr) }
	failed := func(cause error) error {
		path := ""
		if cfg.logDir != "" {
			path = serverLogPath(cfg, "", f.name)
		} else if tmp, err := os.CreateTemp("", "conform-image-*.log"); err == nil {
			path = tmp.Name()
			tmp.Close()
		}
		kept := saveLogs(path)
		_ = terminate()
		if kept != "" {
			return fmt.Errorf("%w; its log: %s", cause, kept)
		}
		return cause
	}
	if err != nil {
		return nil, failed(fmt.Errorf("start container %s: %w", f.image, err))
	}
	hostName, err := ctr.Host(runCtx)
	if err != nil {
		return nil, failed(fmt.Errorf("container host: %w", err))
	}
	port, err := publishedPort(runCtx, ctr, exposed)
	if err != nil {
		return nil, failed(err)
	}
	cs, endpoint, err := f.connectionString(hostName, port)
	if err != nil {
		return nil, failed(err)
	}
	info := driver.Info{Name: f.name, Kind: KindImage, Version: imageTag(f.image), Endpoint: endpoint}
	b, info, err := remoteBackend(cfg, cs, info)
	if err != nil {
		return nil, failed(err)
	}
	if err := awaitServing(runCtx, b, cfg.startTimeout); err != nil {
		return nil, failed(fmt.Errorf("container %s started but does not serve the Table API through %s: %w", f.image, endpoint, err))
	}
	if d, ok := b.(driver.Describer); ok && !versionLike(info.Version) {
		if v := d.Info().Version; v != "" {
			info.Version = v // the Server header where the tag names no version ("local", "latest")
		}
	}
	closeFn := func() error {
		if cfg.logDir != "" {
			saveLogs(serverLogPath(cfg, "", f.name))
		}
		return terminate()
	}
	return &Target{Backend: b, Info: info, Close: onlyOnce(closeFn)}, nil
}

// saveContainerLog writes the log of ctr into path and returns path, or "" when there is no
// container, no path or no log to keep.
func saveContainerLog(ctr testcontainers.Container, path string) string {
	if ctr == nil || path == "" {
		return ""
	}
	lctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := ctr.Logs(lctx)
	if err != nil {
		return ""
	}
	defer r.Close()
	out, err := os.Create(path)
	if err != nil {
		return ""
	}
	defer out.Close()
	_, _ = io.Copy(out, r)
	return path
}

// terminateContainer stops and removes ctr, if there is one, waiting at most 30 s.
func terminateContainer(ctr testcontainers.Container) error {
	if ctr == nil {
		return nil
	}
	tctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return testcontainers.TerminateContainer(ctr, testcontainers.StopContext(tctx))
}

// publishedPort returns the host port the engine published for the container port exposed
// ("10002/tcp").
func publishedPort(ctx context.Context, ctr testcontainers.Container, exposed string) (int, error) {
	ports, err := ctr.Ports(ctx)
	if err != nil {
		return 0, fmt.Errorf("container ports: %w", err)
	}
	for p, bindings := range ports {
		if string(p) != exposed {
			continue
		}
		for _, b := range bindings {
			if n, err := strconv.Atoi(b.HostPort); err == nil && n > 0 {
				return n, nil
			}
		}
	}
	return 0, fmt.Errorf("the engine published no host port for %s", exposed)
}

// versionLike reports whether s starts like a version number ("3.35.0", "v1.2").
func versionLike(s string) bool {
	s = strings.TrimPrefix(s, "v")
	return s != "" && s[0] >= '0' && s[0] <= '9'
}

// onlyOnce makes a Close safe to call more than once.
func onlyOnce(f func() error) func() error {
	var (
		once sync.Once
		err  error
	)
	return func() error {
		once.Do(func() { err = f() })
		return err
	}
}
