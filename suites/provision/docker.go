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
}

func (e *DockerUnavailableError) Error() string {
	return fmt.Sprintf("%s: %s (tried %s); start Docker or set DOCKER_HOST to run it",
		AzuriteDocker, ErrDockerUnavailable, strings.Join(e.Tried, ", "))
}

// Is makes errors.Is(err, ErrDockerUnavailable) true.
func (e *DockerUnavailableError) Is(target error) bool { return target == ErrDockerUnavailable }

// dockerPingTimeout bounds the check of one candidate Docker host.
const dockerPingTimeout = 2 * time.Second

// openDocker runs Azurite's table service in a container through testcontainers-go's
// Azurite module, after checking that a Docker engine answers: testcontainers panics when
// it finds none, and caches that for the life of the process.
func openDocker(ctx context.Context, cfg config) (t *Target, err error) {
	if tried, ok := dockerReachable(ctx); !ok {
		return nil, &DockerUnavailableError{Tried: tried}
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
	return &Target{Backend: b, Info: info, Close: terminate}, nil
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
	ctx, cancel := context.WithTimeout(ctx, dockerPingTimeout)
	defer cancel()
	var dial func(ctx context.Context, _, _ string) (net.Conn, error)
	target := "http://docker/_ping"
	switch u.Scheme {
	case "unix":
		path := u.Path
		if _, err := os.Stat(path); err != nil {
			return false
		}
		dial = func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", path)
		}
	case "tcp", "http", "https":
		scheme := "http"
		if u.Scheme == "https" || os.Getenv("DOCKER_TLS_VERIFY") != "" {
			// Without the client certificates a TLS engine cannot be pinged here; a
			// listening port is taken as reachable and testcontainers does the rest.
			conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", u.Host)
			if err != nil {
				return false
			}
			conn.Close()
			return true
		}
		target = scheme + "://" + u.Host + "/_ping"
	default:
		return false
	}
	client := &http.Client{Transport: &http.Transport{DialContext: dial}, Timeout: dockerPingTimeout}
	defer client.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64))
	return resp.StatusCode == http.StatusOK
}
