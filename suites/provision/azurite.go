package provision

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tableconform/conform/suites/driver"
)

// The emulator's well-known development account (public, documented for Azurite:
// https://learn.microsoft.com/en-us/azure/storage/common/storage-use-azurite#well-known-storage-account-and-key).
const (
	emulatorAccount = "devstoreaccount1"
	emulatorKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// emulator is one Azurite line conform knows how to install and start.
type emulator struct {
	name    string
	version string // the version the committed manifest pins
	pkg     npmPackage
	// entry is the table service's script inside node_modules/azurite.
	entry string
	// args returns the command line for a table service on port, keeping data under dataDir.
	args func(port int, dataDir string) []string
	// checkRoundTrip makes Open try a round trip before returning the target.
	checkRoundTrip bool
}

// azuriteCurrent is Azurite 3.35.0, the newest release that supports Node.js 20, pinned
// exactly in the repository's package.json and package-lock.json.
var azuriteCurrent = emulator{
	name:    Azurite,
	version: "3.35.0",
	pkg:     npmPackage{name: Azurite},
	entry:   filepath.Join("dist", "src", "table", "main.js"),
	args: func(port int, _ string) []string {
		// In 3.35.0 telemetry is on unless --disableTelemetry is given (there is no
		// environment variable for it); --inMemoryPersistence refuses --location, so
		// the working directory is the workspace. --skipApiVersionCheck lets drivers send
		// any x-ms-version. (--loose only affects blob and queue.)
		return []string{
			"--tableHost", "127.0.0.1", "--tablePort", strconv.Itoa(port),
			"--inMemoryPersistence", "--disableTelemetry", "--skipApiVersionCheck",
		}
	},
}

// azuriteLegacy is the deprecated Azurite 2.x line (npm azurite@2.7.1). Its table service
// is bin/table with minimist flags; it has no in-memory mode, so its database lives in the
// run's temporary directory.
var azuriteLegacy = emulator{
	name:    AzuriteLegacy,
	version: "2.7.1",
	pkg: npmPackage{
		name:        AzuriteLegacy,
		manifestDir: filepath.Join("scripts", "azurite-legacy"),
		installDir:  filepath.Join(cacheDir, "azurite-legacy"),
	},
	entry: filepath.Join("bin", "table"),
	args: func(port int, dataDir string) []string {
		return []string{"--tablePort", strconv.Itoa(port), "--location", dataDir}
	},
	checkRoundTrip: true,
}

func openAzurite(ctx context.Context, cfg config, em emulator) (*Target, error) {
	pkgDir, err := installAzurite(ctx, cfg, em)
	if err != nil {
		return nil, err
	}
	version, err := packageVersion(pkgDir)
	if err != nil {
		return nil, fmt.Errorf("installed package: %w", err)
	}
	if em.args == nil {
		em.args = versionArgs(pkgDir)
	}
	if _, err := os.Stat(filepath.Join(pkgDir, em.entry)); err != nil {
		return nil, fmt.Errorf("this Azurite (%s) has no table service (no %s in %s; it came in 3.12.0)", version, filepath.ToSlash(em.entry), pkgDir)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, errors.New("node is not installed (Azurite needs Node.js 20 or later)")
	}
	proc, err := startEmulator(ctx, cfg, em, node, filepath.Join(pkgDir, em.entry))
	if err != nil {
		return nil, err
	}
	endpoint := fmt.Sprintf("http://127.0.0.1:%d/%s", proc.port, emulatorAccount)
	info := driver.Info{Name: em.name, Kind: "azurite", Version: version, Endpoint: endpoint}
	b, info, err := remoteBackend(cfg, emulatorConnectionString(endpoint), info)
	if err != nil {
		_ = proc.close()
		return nil, err
	}
	if em.checkRoundTrip {
		probeCtx, cancel := context.WithTimeout(ctx, cfg.startTimeout)
		err := roundTrip(probeCtx, b)
		cancel()
		if err != nil {
			_ = proc.close()
			return nil, fmt.Errorf("the started Azurite %s does not serve the Table API as conform drives it (%s driver): %v; log: %s",
				version, cfg.driver, oneLine(err.Error()), proc.logPath)
		}
	}
	return &Target{Backend: b, Info: info, Close: proc.close, LogPath: proc.logPath}, nil
}

// installAzurite installs em unless it is installed and returns its package folder
// (node_modules/azurite). The pinned lines install from the repository's lock files when
// conform runs in a checkout; outside one (an installed binary), and for azurite@VERSION,
// the version is installed from npm into conform's cache directory.
func installAzurite(ctx context.Context, cfg config, em emulator) (string, error) {
	installCtx, cancel := context.WithTimeout(ctx, cfg.installTimeout)
	defer cancel()
	if em.pkg.name != "" {
		root, err := findRoot(cfg.root)
		if err == nil {
			dir, err := ensureInstalled(installCtx, root, em.pkg)
			if err != nil {
				return "", fmt.Errorf("install from npm: %w", err)
			}
			return filepath.Join(dir, "node_modules", "azurite"), nil
		}
		if cfg.root != "" || os.Getenv(rootEnv) != "" {
			return "", err // a root named explicitly is never replaced by the cache
		}
	}
	cache, err := CacheDir(cfg.cacheDir)
	if err != nil {
		return "", err
	}
	dir, err := ensureVersionInstalled(installCtx, cache, em.version, cfg.progress)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "node_modules", "azurite"), nil
}

func emulatorConnectionString(endpoint string) string {
	return "DefaultEndpointsProtocol=http;AccountName=" + emulatorAccount + ";AccountKey=" + emulatorKey + ";TableEndpoint=" + endpoint + ";"
}

// process is a started emulator.
type process struct {
	cmd      *exec.Cmd
	port     int
	logPath  string
	workDir  string
	keepDir  bool
	logFile  *os.File
	exited   chan struct{}
	waitErr  error
	once     sync.Once
	closeErr error
}

// startAttempts is how many free ports startEmulator tries when the one it picked is
// taken between choosing it and the emulator binding it.
const startAttempts = 3

func startEmulator(ctx context.Context, cfg config, em emulator, node, script string) (*process, error) {
	var lastErr error
	for attempt := 0; attempt < startAttempts; attempt++ {
		p, err := startOnce(ctx, cfg, em, node, script)
		if err == nil {
			return p, nil
		}
		lastErr = err
		if !errors.Is(err, errPortTaken) {
			break
		}
	}
	return nil, lastErr
}

var errPortTaken = errors.New("port already in use")

func startOnce(ctx context.Context, cfg config, em emulator, node, script string) (*process, error) {
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("find a free loopback port: %w", err)
	}
	workDir, err := os.MkdirTemp("", "conform-"+em.name+"-")
	if err != nil {
		return nil, fmt.Errorf("work directory: %w", err)
	}
	dataDir := filepath.Join(workDir, "data")
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return nil, err
	}
	logPath := filepath.Join(workDir, em.name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("log file: %w", err)
	}
	cmd := exec.Command(node, append([]string{script}, em.args(port, dataDir)...)...)
	cmd.Dir = workDir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(os.Environ(), "NODE_ENV=production")
	setProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", em.name, err)
	}
	p := &process{cmd: cmd, port: port, logPath: logPath, workDir: workDir, logFile: logFile, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	if err := p.waitReady(ctx, cfg.startTimeout); err != nil {
		p.keepDir = true // keep the log that explains the failure
		_ = p.close()
		return nil, err
	}
	return p, nil
}

// waitReady polls the emulator until it answers any HTTP request, it exits, or timeout.
func (p *process) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	url := fmt.Sprintf("http://127.0.0.1:%d/%s/Tables", p.port, emulatorAccount)
	for {
		select {
		case <-p.exited:
			last := lastLine(p.logPath)
			if strings.Contains(last, "EADDRINUSE") {
				return errPortTaken
			}
			return fmt.Errorf("exited before answering (%v): %s; log: %s", p.waitErr, last, p.logPath)
		default:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("did not answer on 127.0.0.1:%d within %v; log: %s", p.port, timeout, p.logPath)
		case <-p.exited:
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// close stops the emulator's process group: SIGTERM, then SIGKILL after a grace period.
func (p *process) close() error {
	p.once.Do(func() {
		_ = terminateGroup(p.cmd)
		select {
		case <-p.exited:
		case <-time.After(3 * time.Second):
			_ = killGroup(p.cmd)
			select {
			case <-p.exited:
			case <-time.After(5 * time.Second):
				p.closeErr = fmt.Errorf("process %d did not exit after SIGKILL", p.cmd.Process.Pid)
			}
		}
		// The group may hold children that outlived the leader.
		_ = killGroup(p.cmd)
		p.logFile.Close()
		if !p.keepDir && os.Getenv("CONFORM_KEEP_LOGS") == "" {
			_ = os.RemoveAll(p.workDir)
		}
	})
	return p.closeErr
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
