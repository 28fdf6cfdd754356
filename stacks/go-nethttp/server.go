package main

import (
	"context"
	"errors"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

func serve(a *app) error {
	if a.cfg.port == "" {
		return errors.New("PORT is not set")
	}
	server := &http.Server{
		Addr:    a.cfg.listenAddr(),
		Handler: withServerHeader(routes(a)),
		// Production hygiene: bound header reads and idle keep-alive connections. No write
		// timeout, because large loop counts legitimately compute for a long time.
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          log.New(os.Stderr, "go-nethttp: ", log.LstdFlags),
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	failed := make(chan error, 1)
	go func() { failed <- server.ListenAndServe() }()
	select {
	case err := <-failed:
		return err
	case <-ctx.Done():
	}
	// Finish in-flight requests, but never hold up the orchestrator for long.
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := server.Shutdown(shutdownCtx); err != nil {
		return server.Close()
	}
	return nil
}

func routes(a *app) *http.ServeMux {
	mux := http.NewServeMux()
	for name, h := range workloads {
		pattern := "GET /" + name
		if name == "data" {
			pattern = "GET /data/{n}"
		}
		mux.Handle(pattern, workloadHandler(a, h))
	}
	return mux
}

// withServerHeader adds the Server header to every response (net/http adds Date itself).
func withServerHeader(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", "go-nethttp")
		next.ServeHTTP(w, r)
	})
}

func workloadHandler(a *app, h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		params := r.URL.Query()
		if n := r.PathValue("n"); n != "" {
			params.Set("n", n)
		}
		out, err := h(r.Context(), a, params)
		if err != nil {
			writeError(w, r, err)
			return
		}
		w.Header().Set("Content-Type", out.contentType)
		w.Header().Set("Content-Length", strconv.Itoa(len(out.body)))
		w.Write(out.body)
	})
}

func writeError(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusInternalServerError
	var we *workloadError
	switch {
	case errors.As(err, &we):
		status = we.status
	case r.Context().Err() != nil:
		return // the client went away (e.g. the load generator stopped): nobody to answer
	default:
		log.Printf("%s %s: %v", r.Method, r.URL.RequestURI(), err)
	}
	http.Error(w, err.Error(), status)
}
