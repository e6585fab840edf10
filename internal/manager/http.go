package manager

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/httpguard"
)

// HTTPOff as the listen address turns the HTTP server off.
const HTTPOff = "off"

// httpServer is the manager's listener and server.
type httpServer struct {
	srv *http.Server
	ln  net.Listener
}

// startHTTP listens and builds the server: GET /healthz is the manager's,
// everything else goes to the handler Options.Handler builds (the
// composition root decides what that serves: the MCP endpoint, the web UI
// and the whole /api/v1). It refuses a non-loopback address without a
// token before listening.
func (m *Manager) startHTTP() (*httpServer, error) {
	cfg := m.Config()
	addr := m.opts.HTTP
	if addr == "" {
		addr = cfg.Manager.HTTP
	}
	if addr == "" || addr == HTTPOff {
		return nil, nil
	}
	guard := httpguard.Config{Addr: addr, Token: cfg.Manager.Token}
	if err := guard.Validate(); err != nil {
		return nil, fmt.Errorf("manager: refusing to serve: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("manager: listen on %s: %w", addr, err)
	}
	actual := ln.Addr().String()
	guard.Addr = actual
	mux := http.NewServeMux()
	// Public: it says nothing but "ok" and the pid.
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "pid": m.claim.Instance().PID})
	})
	if m.opts.Handler != nil {
		h, err := m.opts.Handler(m, guard)
		if err != nil {
			ln.Close()
			return nil, fmt.Errorf("manager: build the HTTP handler: %w", err)
		}
		mux.Handle("/", h)
	}
	m.mu.Lock()
	m.addr = actual
	m.mu.Unlock()
	if err := m.claim.SetHTTP(actual); err != nil {
		m.problem("pid file", err)
		m.log.Warn("cannot record the listen address in the pid file", "err", err)
	}
	// No ReadTimeout or WriteTimeout: they would cut the event streams.
	// IdleTimeout closes keep-alive connections left idle, which would
	// otherwise each hold a descriptor and a goroutine for good.
	return &httpServer{ln: ln, srv: &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(m.log.Handler(), slog.LevelWarn),
	}}, nil
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v) // the client went away; nothing to tell it
}

// keepSwapMines makes the mine after a condensation that a request
// started go on when the request ends, until work ends
// (app.KeepSwapMines). Set before serve.
func (s *httpServer) keepSwapMines(work context.Context) {
	s.srv.BaseContext = func(net.Listener) context.Context {
		return app.KeepSwapMines(context.Background(), work)
	}
}

func (s *httpServer) serve(lg *slog.Logger) {
	if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		lg.Error("http server stopped", "err", err)
	}
}

// shutdown stops accepting, lets requests in flight finish for up to two
// seconds, then closes whatever is left (event streams).
func (s *httpServer) shutdown(lg *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		lg.Debug("http shutdown timed out; closing connections", "err", err)
		_ = s.srv.Close()
	}
}
