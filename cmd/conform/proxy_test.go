package main

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tableconform/conform/suites/report"
	"github.com/tableconform/conform/suites/verdict"
)

// TestSuiteThroughReverseProxiesGivesTheDirectOutcomes runs the whole suite against one
// `conform serve` directly, through Go's httputil reverse proxy with default settings and,
// where nginx is installed, through nginx, and requires every spec's outcome to be the same
// on all of them: a proxy between conform and a backend must change no verdict (issue 11's
// false reds came from a lost answer behind Go's proxy). CONFORM_PROXY_LABEL_FILTER
// narrows the suite for a quick look.
func TestSuiteThroughReverseProxiesGivesTheDirectOutcomes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole suite three times")
	}
	srv := startServeProcess(t)
	target, err := url.Parse(srv.base)
	if err != nil {
		t.Fatal(err)
	}
	goProxy := httptest.NewServer(httputil.NewSingleHostReverseProxy(target))
	t.Cleanup(goProxy.Close)
	backends := []string{
		"direct=" + srv.conn,
		"goproxy=" + strings.Replace(srv.conn, srv.base, goProxy.URL, 1),
	}
	if nginxURL, why := startNginx(t, target.Host); nginxURL != "" {
		backends = append(backends, "nginx="+strings.Replace(srv.conn, srv.base, nginxURL, 1))
	} else {
		t.Log("the nginx part is skipped: " + why)
	}
	out := t.TempDir()
	args := []string{"run", "--out", out, "--parallel", "3"}
	for _, b := range backends {
		args = append(args, "--backend", b)
	}
	if f := os.Getenv("CONFORM_PROXY_LABEL_FILTER"); f != "" {
		args = append(args, "--label-filter", f)
	}
	cmd := exec.Command(conformBin, args...)
	cmd.Dir = t.TempDir()
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Minute):
		_ = cmd.Process.Kill()
		<-done
		t.Fatal("the run did not finish in 20 minutes")
	}
	rep, err := report.ReadJSON(filepath.Join(out, report.FileJSON))
	if err != nil {
		t.Fatalf("no report (exit %d): %v\n%s", cmd.ProcessState.ExitCode(), err, lastLines(stderr.String(), 30))
	}
	direct := specOutcomes(rep, 0)
	if len(direct) == 0 {
		t.Fatalf("no spec ran directly\n%s", lastLines(stderr.String(), 30))
	}
	for bi := range rep.Backends {
		b := rep.Backends[bi]
		if b.StartError != "" {
			t.Errorf("%s: %s", b.Name, b.StartError)
			continue
		}
		if b.Counts.Errors > 0 {
			t.Errorf("%s: %d specs without a usable answer", b.Name, b.Counts.Errors)
		}
		if bi == 0 {
			continue
		}
		got := specOutcomes(rep, bi)
		var diffs []string
		for k, want := range direct {
			if got[k] != want {
				diffs = append(diffs, fmt.Sprintf("  %s: direct %s, %s %s", k, want, b.Name, got[k]))
			}
		}
		sort.Strings(diffs)
		if len(diffs) > 0 {
			t.Errorf("%d specs differ through %s:\n%s", len(diffs), b.Name, strings.Join(firstN(diffs, 20), "\n"))
		}
		t.Logf("%s: %d specs, %d errors", b.Name, len(got), b.Counts.Errors)
	}
	for bi, b := range rep.Backends {
		if b.Counts.Errors > 0 {
			for _, row := range rep.Rules {
				for _, s := range row.Cells[bi].Specs {
					if s.Outcome == verdict.Error {
						t.Logf("%s error: %s %s: %s", b.Name, row.ID, s.Text, firstLine(s.Failure))
					}
				}
			}
		}
	}
}

// specOutcomes maps rule and spec text to its outcome on backend bi.
func specOutcomes(r report.Report, bi int) map[string]verdict.Outcome {
	m := map[string]verdict.Outcome{}
	for _, row := range r.Rules {
		for _, s := range row.Cells[bi].Specs {
			m[row.ID+" | "+s.Text] = s.Outcome
		}
	}
	return m
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], fmt.Sprintf("  ... and %d more", len(s)-n))
	}
	return s
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// startNginx starts nginx as a reverse proxy to upstream (host:port) on a free loopback
// port, with its files in a temporary folder, and returns its base URL, or "" and why not.
func startNginx(t *testing.T, upstream string) (string, string) {
	t.Helper()
	bin, err := exec.LookPath("nginx")
	if err != nil {
		if _, serr := os.Stat("/usr/sbin/nginx"); serr != nil {
			return "", "nginx is not installed (.ci/run installs Debian's nginx-light)"
		}
		bin = "/usr/sbin/nginx"
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	// Header buffers are raised: a Location for a 512-character CJK key is 4.6 KB. Bodies
	// pass as they come (no buffering, no size limit: the backend judges them).
	conf := fmt.Sprintf(`daemon off;
master_process off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path %[1]s/body;
  proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fastcgi;
  uwsgi_temp_path %[1]s/uwsgi;
  scgi_temp_path %[1]s/scgi;
  client_max_body_size 0;
  large_client_header_buffers 8 64k;
  upstream conform { server %[2]s; keepalive 16; }
  server {
    listen 127.0.0.1:%[3]d;
    location / {
      proxy_pass http://conform;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_request_buffering off;
      proxy_buffer_size 64k;
      proxy_buffers 16 64k;
      proxy_busy_buffers_size 128k;
    }
  }
}
`, dir, upstream, port)
	confPath := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-p", dir, "-c", confPath)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", "nginx did not start: " + err.Error()
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return "", "nginx ended at once: " + firstLine(out.String())
		default:
		}
		if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second); err == nil {
			c.Close()
			if resp, err := http.Get(base + "/"); err == nil {
				resp.Body.Close()
				return base, ""
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "", "nginx did not listen within 10 s"
}
