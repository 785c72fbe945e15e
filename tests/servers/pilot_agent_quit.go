// A stand-in for Istio pilot-agent's status server, answering /quitquitquit the way its
// handleQuit does (istio/istio pilot/cmd/pilot-agent/status/server.go, with
// pkg/util/net/ip.go IsRequestFromLocalhost): 403 to a caller that is not on loopback,
// 405 to any method but POST, else 200 "OK", after which the process exits 0 as pilot-agent
// does. Like pilot-agent it is Go net/http, so the wrapper's HTTP clients meet the same
// HTTP/1.x parser. /healthz/ready answers 200.
//
// Usage: pilot_agent_quit ADDR (e.g. 127.0.0.1:0); prints the bound address on stdout.
package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"time"
)

func main() {
	ln, err := net.Listen("tcp", os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Println(ln.Addr().String())
	quit := make(chan struct{}, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("/quitquitquit", func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
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
	go func() { _ = http.Serve(ln, mux) }()
	<-quit
	// Let the answer reach the caller before the process goes.
	time.Sleep(100 * time.Millisecond)
	os.Exit(0)
}
