package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"strings"
	"time"
)

// serveProfiles serves Go's runtime profiles (the handlers of net/http/pprof, on a mux of
// their own rather than http.DefaultServeMux) on addr, which must be a loopback address:
// profiles show the server's memory, and nothing here listens beyond the machine unasked.
// It returns a function that stops the profile server.
func serveProfiles(log io.Writer, addr string) (func(), error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, usageErr("--pprof wants HOST:PORT: %v", err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, usageErr("--pprof serves profiles on a loopback address only (127.0.0.1:PORT, [::1]:PORT or localhost:PORT), not %q", host)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, usageErr("--pprof: listen on %s: %v", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", redactedCmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	fmt.Fprintf(log, "conform serve: profiles on http://%s/debug/pprof/ (go tool pprof http://%s/debug/pprof/profile)\n", ln.Addr(), ln.Addr())
	return func() { _ = srv.Close() }, nil
}

// redactedCmdline answers /debug/pprof/cmdline as net/http/pprof does (the arguments,
// separated by NUL bytes) with the keys of --account left out: a profile endpoint never
// shows a key.
func redactedCmdline(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprint(w, strings.Join(redactArgs(os.Args), "\x00"))
}

// redactArgs returns args with the key of every --account NAME:KEY (or --account=NAME:KEY)
// replaced by a mark.
func redactArgs(args []string) []string {
	out := make([]string, len(args))
	const mark = "(key not shown)"
	for i, a := range args {
		out[i] = a
		switch {
		case i > 0 && (args[i-1] == "--account" || args[i-1] == "-account"):
			name, _, _ := strings.Cut(a, ":")
			out[i] = name + ":" + mark
		case strings.HasPrefix(a, "--account=") || strings.HasPrefix(a, "-account="):
			flag, value, _ := strings.Cut(a, "=")
			name, _, _ := strings.Cut(value, ":")
			out[i] = flag + "=" + name + ":" + mark
		}
	}
	return out
}
