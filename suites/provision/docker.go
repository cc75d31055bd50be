package provision

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/testcontainers/testcontainers-go"
	tcazurite "github.com/testcontainers/testcontainers-go/modules/azure/azurite"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver"
)

// ErrDockerUnavailable is matched (errors.Is) by the error Open returns for
// "azurite-docker" when no Docker engine answers. Callers skip with the error's message.
var ErrDockerUnavailable = errors.New("no Docker engine is reachable")

// DockerUnavailableError is the error Open returns for "azurite-docker" when no Docker
// engine answers: Error() is one line saying so and naming what was tried.
type DockerUnavailableError struct {
	// Tried lists the Docker hosts that were tried.
	Tried []string
	// Backend names the backend that needed the engine ("" for azurite-docker).
	Backend string
}

func (e *DockerUnavailableError) Error() string {
	backend := e.Backend
	if backend == "" {
		backend = AzuriteDocker
	}
	return fmt.Sprintf("%s: %s (tried %s); start Docker or set DOCKER_HOST to run it",
		backend, ErrDockerUnavailable, strings.Join(e.Tried, ", "))
}

// Is makes errors.Is(err, ErrDockerUnavailable) true.
func (e *DockerUnavailableError) Is(target error) bool { return target == ErrDockerUnavailable }

// ErrDockerHostUnsafe is matched (errors.Is) by the error Open returns for "azurite-docker"
// when conform runs inside a container (/.dockerenv exists) and TESTCONTAINERS_HOST_OVERRIDE
// does not name a loopback address. testcontainers would then look for the engine's bridge
// gateway and, when the engine reports none, dial the default gateway of the machine: an
// address outside it, hundreds of times a minute until its timeout.
var ErrDockerHostUnsafe = errors.New("TESTCONTAINERS_HOST_OVERRIDE must name a loopback address inside a container")

// dockerHostOverrideEnv is testcontainers-go's setting for the host that reaches the
// ports a container publishes.
const dockerHostOverrideEnv = "TESTCONTAINERS_HOST_OVERRIDE"

// insideContainerMarker is the file testcontainers-go takes as "running inside a container".
var insideContainerMarker = "/.dockerenv"

// CheckDocker reports whether "azurite-docker" could start a container here, without
// starting one: nil, a *DockerUnavailableError (errors.Is ErrDockerUnavailable: no engine
// answers; callers skip with its one line) or an error matching ErrDockerHostUnsafe (an
// engine answers, but testcontainers would dial outside the machine; callers stop).
func CheckDocker(ctx context.Context) error {
	_, err := checkDocker(ctx, AzuriteDocker)
	return err
}

// checkDocker is CheckDocker for the backend named backend that also returns the Docker
// host that answered.
func checkDocker(ctx context.Context, backend string) (host string, err error) {
	tried, ok := dockerReachable(ctx)
	if !ok {
		return "", &DockerUnavailableError{Tried: tried, Backend: backend}
	}
	return tried[len(tried)-1], checkDockerHost(backend)
}

// ErrDockerImageMissing is matched (errors.Is) by the error Open returns for
// "azurite-docker" inside a container when the engine lacks the image: a pull would go to a
// registry outside the machine, so conform asks for the local build instead.
var ErrDockerImageMissing = errors.New("the image is not on the Docker engine")

// checkLocalImage fails with ErrDockerImageMissing when conform runs inside a container and
// the engine at host does not hold image. Elsewhere, and where the engine cannot be asked,
// testcontainers pulls what is missing.
func checkLocalImage(ctx context.Context, host, backend, image string) error {
	if _, err := os.Stat(insideContainerMarker); err != nil {
		return nil
	}
	status, err := dockerGet(ctx, host, "/images/"+url.PathEscape(image)+"/json")
	if err != nil || status != http.StatusNotFound {
		return nil
	}
	hint := "load it into the engine"
	if backend == AzuriteDocker {
		hint = "build it with scripts/azurite-image.sh"
	}
	return fmt.Errorf("%s: %w: %s (inside a container conform does not pull from a registry; %s)",
		backend, ErrDockerImageMissing, image, hint)
}

// checkDockerHost refuses to let testcontainers pick a host by itself inside a container.
func checkDockerHost(backend string) error {
	if _, err := os.Stat(insideContainerMarker); err != nil {
		return nil
	}
	host := strings.TrimSpace(os.Getenv(dockerHostOverrideEnv))
	if isLoopbackHost(host) {
		return nil
	}
	got := "unset"
	if host != "" {
		got = fmt.Sprintf("%q", host)
	}
	return fmt.Errorf("%s: %w (found %s, %s is %s): export %s=127.0.0.1 when the engine runs on this machine",
		backend, ErrDockerHostUnsafe, insideContainerMarker, dockerHostOverrideEnv, got, dockerHostOverrideEnv)
}

func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// dockerPingTimeout bounds the check of one candidate Docker host.
const dockerPingTimeout = 2 * time.Second

// openDocker runs Azurite's table service in a container through testcontainers-go's
// Azurite module, after checking that a Docker engine answers: testcontainers panics when
// it finds none, and caches that for the life of the process. Inside a container it
// refuses to start unless the ports are reached through loopback (CheckDocker) and the image
// is already on the engine (checkLocalImage).
func openDocker(ctx context.Context, cfg config) (t *Target, err error) {
	host, err := checkDocker(ctx, AzuriteDocker)
	if err != nil {
		return nil, err
	}
	if err := checkLocalImage(ctx, host, AzuriteDocker, cfg.dockerImage); err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			t, err = nil, fmt.Errorf("testcontainers: %v", r)
		}
	}()
	runCtx, cancel := context.WithTimeout(ctx, cfg.installTimeout)
	defer cancel()
	ctr, err := tcazurite.Run(runCtx, cfg.dockerImage,
		tcazurite.WithEnabledServices(tcazurite.TableService),
		tcazurite.WithInMemoryPersistence(0),
		testcontainers.WithCmdArgs("--disableTelemetry", "--skipApiVersionCheck"),
	)
	terminate := func() error {
		if ctr == nil {
			return nil
		}
		tctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return testcontainers.TerminateContainer(ctr, testcontainers.StopContext(tctx))
	}
	if err != nil {
		_ = terminate()
		return nil, fmt.Errorf("start container %s: %w", cfg.dockerImage, err)
	}
	base, err := ctr.TableServiceURL(runCtx)
	if err != nil {
		_ = terminate()
		return nil, fmt.Errorf("container table endpoint: %w", err)
	}
	endpoint := strings.TrimRight(base, "/") + "/" + emulatorAccount
	info := driver.Info{Name: AzuriteDocker, Kind: "azurite", Version: imageTag(cfg.dockerImage), Endpoint: endpoint}
	b, info, err := remoteBackend(cfg, emulatorConnectionString(endpoint), info)
	if err != nil {
		_ = terminate()
		return nil, err
	}
	if err := awaitServing(runCtx, b, cfg.startTimeout); err != nil {
		_ = terminate()
		return nil, fmt.Errorf("container %s started but does not serve the Table API through %s: %w", cfg.dockerImage, endpoint, err)
	}
	return &Target{Backend: b, Info: info, Close: terminate}, nil
}

// awaitServing retries a round trip until one succeeds or timeout passes. The port wait of
// testcontainers runs inside the container; the published port may still reset connections
// for a moment after it.
func awaitServing(ctx context.Context, b api.Backend, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		err := roundTrip(ctx, b)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func imageTag(ref string) string {
	if i := strings.LastIndex(ref, ":"); i >= 0 && !strings.Contains(ref[i:], "/") {
		return ref[i+1:]
	}
	return ""
}

// dockerReachable pings the Docker hosts testcontainers would use: DOCKER_HOST, the
// docker.host/tc.host of ~/.testcontainers.properties, the default socket and the
// rootless sockets. It returns what it tried.
func dockerReachable(ctx context.Context) (tried []string, ok bool) {
	for _, host := range dockerHostCandidates() {
		tried = append(tried, host)
		if pingDocker(ctx, host) {
			return tried, true
		}
	}
	return tried, false
}

func dockerHostCandidates() []string {
	var hosts []string
	add := func(h string) {
		if h == "" {
			return
		}
		for _, seen := range hosts {
			if seen == h {
				return
			}
		}
		hosts = append(hosts, h)
	}
	add(os.Getenv("DOCKER_HOST"))
	home, _ := os.UserHomeDir()
	if home != "" {
		if b, err := os.ReadFile(filepath.Join(home, ".testcontainers.properties")); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
				if ok && (strings.TrimSpace(k) == "tc.host" || strings.TrimSpace(k) == "docker.host") {
					add(strings.TrimSpace(v))
				}
			}
		}
	}
	add("unix:///var/run/docker.sock")
	if xdg := os.Getenv("XDG_RUNTIME_DIR"); xdg != "" {
		add("unix://" + filepath.Join(xdg, "docker.sock"))
	}
	if home != "" {
		add("unix://" + filepath.Join(home, ".docker", "run", "docker.sock"))
		add("unix://" + filepath.Join(home, ".docker", "desktop", "docker.sock"))
	}
	add(fmt.Sprintf("unix:///run/user/%d/docker.sock", os.Getuid()))
	return hosts
}

// pingDocker sends GET /_ping to a Docker host and reports whether it answered OK.
func pingDocker(ctx context.Context, host string) bool {
	u, err := url.Parse(host)
	if err != nil {
		return false
	}
	if u.Scheme == "https" || (u.Scheme == "tcp" && os.Getenv("DOCKER_TLS_VERIFY") != "") {
		// Without the client certificates a TLS engine cannot be pinged here; a listening
		// port is taken as reachable and testcontainers does the rest.
		ctx, cancel := context.WithTimeout(ctx, dockerPingTimeout)
		defer cancel()
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", u.Host)
		if err != nil {
			return false
		}
		conn.Close()
		return true
	}
	status, err := dockerGet(ctx, host, "/_ping")
	return err == nil && status == http.StatusOK
}

// errDockerGetUnsupported is dockerGet's answer for a host it cannot talk to by itself.
var errDockerGetUnsupported = errors.New("not a unix socket or plain tcp Docker host")

// dockerGet sends GET path to a Docker host over a unix socket or plain tcp and returns the
// status, within dockerPingTimeout.
func dockerGet(ctx context.Context, host, path string) (int, error) {
	u, err := url.Parse(host)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, dockerPingTimeout)
	defer cancel()
	var dial func(ctx context.Context, _, _ string) (net.Conn, error)
	target := "http://docker" + path
	switch u.Scheme {
	case "unix":
		socket := u.Path
		if _, err := os.Stat(socket); err != nil {
			return 0, err
		}
		dial = func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", socket)
		}
	case "tcp", "http":
		if os.Getenv("DOCKER_TLS_VERIFY") != "" {
			return 0, errDockerGetUnsupported
		}
		target = "http://" + u.Host + path
	default:
		return 0, errDockerGetUnsupported
	}
	client := &http.Client{Transport: &http.Transport{DialContext: dial}, Timeout: dockerPingTimeout}
	defer client.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, nil
}
