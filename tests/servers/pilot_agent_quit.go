// Stand-ins for the proxies' own HTTP endpoints, in Go net/http so that the wrapper's HTTP
// clients meet the same HTTP/1.x parser as pilot-agent's. Each process exits 0 once it has
// been told to stop, as the real one does.
//
// Mode "istio" (the default): Istio pilot-agent's status server. /quitquitquit answers the
// way its handleQuit does (istio/istio pilot/cmd/pilot-agent/status/server.go, with
// pkg/util/net/ip.go IsRequestFromLocalhost): 403 to a caller that is not on loopback, 405
// to any method but POST, else 200 "OK". /healthz/ready answers 200.
//
// Mode "linkerd": the Linkerd proxy's admin server (linkerd/linkerd2-proxy
// linkerd/app/admin/src/server.rs): /shutdown answers 405 to any method but POST, then 403
// to a caller off loopback, else 200 "shutdown". /ready answers 200 "ready".
// Mode "linkerd-disabled": the same with the endpoint off (LINKERD2_PROXY_SHUTDOWN_ENDPOINT_ENABLED
// false, the default since Linkerd 2.16): a loopback POST gets 404 "shutdown endpoint is not
// enabled" and the process keeps running.
//
// Usage: pilot_agent_quit ADDR [istio|linkerd|linkerd-disabled]; prints the bound address on
// stdout.
package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"time"
)

func fromLoopback(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	ip := net.ParseIP(host)
	return err == nil && ip != nil && ip.IsLoopback()
}

func main() {
	ln, err := net.Listen("tcp", os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	mode := "istio"
	if len(os.Args) > 2 {
		mode = os.Args[2]
	}
	fmt.Println(ln.Addr().String())
	quit := make(chan struct{}, 1)
	mux := http.NewServeMux()
	switch mode {
	case "istio":
		mux.HandleFunc("/quitquitquit", func(w http.ResponseWriter, r *http.Request) {
			if !fromLoopback(r) {
				http.Error(w, "Only requests from localhost are allowed", http.StatusForbidden)
				return
			}
			if r.Method != http.MethodPost {
				http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
				return
			}
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte("OK"))
			quit <- struct{}{}
		})
		mux.HandleFunc("/healthz/ready", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusOK)
		})
	case "linkerd", "linkerd-disabled":
		enabled := mode == "linkerd"
		mux.HandleFunc("/shutdown", func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost {
				http.Error(w, "", http.StatusMethodNotAllowed)
				return
			}
			if !fromLoopback(r) {
				http.Error(w, "shutdown is only allowed from localhost", http.StatusForbidden)
				return
			}
			if !enabled {
				http.Error(w, "shutdown endpoint is not enabled", http.StatusNotFound)
				return
			}
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte("shutdown\n"))
			quit <- struct{}{}
		})
		mux.HandleFunc("/ready", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte("ready\n"))
		})
	default:
		fmt.Fprintln(os.Stderr, "unknown mode", mode)
		os.Exit(2)
	}
	go func() { _ = http.Serve(ln, mux) }()
	<-quit
	// Let the answer reach the caller before the process goes.
	time.Sleep(100 * time.Millisecond)
	os.Exit(0)
}
