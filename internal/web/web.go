// Package web serves hivemem's HTTP JSON API (under /api/v1) and the
// dashboard embedded in the binary: agents against their budgets, search,
// a memory viewer with its regions marked, condensation with a preview
// diff, a live event timeline, backups with diff and restore, and the
// reflector settings.
//
// Memory text is untrusted: pages render it through html/template and an
// escaping markdown renderer, every response carries a strict
// Content-Security-Policy (no inline script, no inline style), and the
// front end builds the DOM with textContent only. When Deps.Guard is set
// the handler applies httpguard itself (token, same-origin check, body cap,
// plus a Host check against DNS rebinding on loopback), keeping only the
// login page and the static assets reachable without the token.
package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/config"
	"github.com/hivemem/hivemem/internal/httpguard"
)

// Deps is what the dashboard works with.
type Deps struct {
	// App is the open home: config, index, palace and event log, and the
	// live settings (App.Settings; a running manager reloads them when
	// config.toml changes). Required.
	App *app.App
	// ManagerStatus reports the long-running manager (pid, uptime, last
	// scan, each agent's mining, ...: the app builds it), shown in
	// /api/v1/status, /api/v1/manager and on the overview; nil when the
	// dashboard runs without a manager.
	ManagerStatus func(context.Context) app.ManagerStatus
	// Guard, when set, is applied by the handler itself (see the package
	// comment): mount the handler without another httpguard.Wrap, or the
	// login page is unreachable when a token is configured. nil means the
	// caller guards, or nothing does (tests).
	Guard *httpguard.Config
	// Logger receives request errors; nil discards.
	Logger *slog.Logger
	// PollInterval is how often an event stream looks at the log file for
	// events written by other processes (default 1 s).
	PollInterval time.Duration
	// Version is shown in the footer and in /api/v1/status.
	Version string
}

// Handler is the API and the dashboard. It is an http.Handler; Close ends
// the live event streams so that a server can shut down promptly.
type Handler struct {
	app     *app.App
	cfg     func() config.Config
	manager func(context.Context) app.ManagerStatus
	guard   *httpguard.Config
	log     *slog.Logger
	poll    time.Duration
	version string

	mux       *http.ServeMux
	public    map[string]bool // patterns of the routes that need no token
	pages     *pages
	static    map[string]staticFile
	condensed app.CondensedIndex // the last condense event of each agent

	done      chan struct{}
	closeOnce sync.Once
}

// New builds the handler. It panics only on a nil App, a programming
// error that no request can cause.
func New(d Deps) *Handler {
	if d.App == nil {
		panic("web.New: Deps.App is nil")
	}
	h := &Handler{
		app: d.App, manager: d.ManagerStatus, guard: d.Guard, log: d.Logger,
		poll: d.PollInterval, version: d.Version, done: make(chan struct{}),
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.poll <= 0 {
		h.poll = time.Second
	}
	if h.version == "" {
		h.version = "dev"
	}
	h.cfg = d.App.Settings
	h.pages = mustParsePages()
	h.static = mustLoadStatic()
	h.routes()
	return h
}

// lastCondensed is each agent's last condensation in the event log, read
// incrementally.
func (h *Handler) lastCondensed() map[string]time.Time {
	return h.condensed.Read(h.app.Home().LogPath())
}

// Close ends every live event stream; the handler keeps serving other
// requests.
func (h *Handler) Close() {
	h.closeOnce.Do(func() { close(h.done) })
}

// The JSON API's routes: method and path pattern, as http.ServeMux takes
// them. The route table below serves them (APIRoutes lists them from it)
// and package client builds its requests from them, so a path is spelled
// once.
const (
	RouteStatus         = "GET /api/v1/status"
	RouteManager        = "GET /api/v1/manager"
	RouteAgents         = "GET /api/v1/agents"
	RouteAgent          = "GET /api/v1/agents/{agent}"
	RouteMemory         = "GET /api/v1/agents/{agent}/memory"
	RouteCondense       = "POST /api/v1/agents/{agent}/condense"
	RouteMine           = "POST /api/v1/mine"
	RouteBackups        = "GET /api/v1/backups"
	RouteAgentBackups   = "GET /api/v1/agents/{agent}/backups"
	RouteBackup         = "GET /api/v1/agents/{agent}/backups/{backup}"
	RouteRestore        = "POST /api/v1/agents/{agent}/backups/{backup}/restore"
	RouteSearch         = "GET /api/v1/search"
	RouteWakeUp         = "GET /api/v1/wake-up"
	RouteEvents         = "GET /api/v1/events"
	RouteEventStream    = "GET /api/v1/events/stream"
	RouteSettings       = "GET /api/v1/settings"
	RouteUpdateSettings = "PATCH /api/v1/settings"
)

// Request and answer types of the API that the handlers' files do not
// name, so that package client shares them.
type (
	// CondenseRequest is the body of POST .../condense.
	CondenseRequest = condenseRequest
	// AgentList is GET /api/v1/agents.
	AgentList struct {
		Agents []AgentSummary `json:"agents"`
	}
	// BackupList is GET /api/v1/backups (Agent empty) and GET
	// /api/v1/agents/{agent}/backups.
	BackupList struct {
		Agent   string       `json:"agent,omitempty"`
		Backups []BackupInfo `json:"backups"`
	}
)

// access says who may use a route when Deps.Guard has a token.
type access int

const (
	// tokenOnly needs the token (bearer header or the login cookie).
	tokenOnly access = iota
	// public needs none: the login form and the static assets, which
	// hold no memory data.
	public
)

// route is one entry of the route table.
type route struct {
	pattern string // method and path, as http.ServeMux takes them
	handler http.Handler
	access  access
}

// routeTable is every route the handler serves: the JSON API under
// /api/v1 (every /api/v1 route of `hivemem run`, the manager's status
// included) and the pages. The guard (Deps.Guard) applies to all of them;
// the access column says which need the token.
func (h *Handler) routeTable() []route {
	api := func(pattern string, fn apiFunc) route { return route{pattern, fn, tokenOnly} }
	page := func(pattern string, fn http.HandlerFunc, a access) route { return route{pattern, fn, a} }
	notFound := func(w http.ResponseWriter, r *http.Request) {
		h.renderError(w, r, http.StatusNotFound, fmt.Errorf("no page at %s", r.URL.Path))
	}
	return []route{
		api(RouteStatus, h.apiStatus),
		api(RouteManager, h.apiManager),
		api(RouteAgents, h.apiAgents),
		api(RouteAgent, h.apiAgent),
		api(RouteMemory, h.apiMemory),
		api(RouteSearch, h.apiSearch),
		api(RouteWakeUp, h.apiWakeUp),
		api(RouteEvents, h.apiEvents),
		page(RouteEventStream, h.apiEventStream, tokenOnly),
		api(RouteCondense, h.apiCondense),
		api(RouteRemember, h.apiRemember()),
		api(RoutePin, h.apiPin()),
		api(RouteUnpin, h.apiUnpin()),
		api(RouteForget, h.apiForget()),
		api(RoutePurge, h.apiPurge),
		api(RouteMine, h.apiMine),
		api(RouteBackups, h.apiBackups),
		api(RouteAgentBackups, h.apiAgentBackups),
		api(RouteBackup, h.apiBackup),
		api(RouteRestore, h.apiRestore),
		api(RouteSettings, h.apiSettings),
		api(RouteUpdateSettings, h.apiUpdateSettings),
		api("/api/", h.apiUnknown),

		page("GET /{$}", h.pageOverview, tokenOnly),
		page("GET /search", h.pageSearch, tokenOnly),
		page("GET /agents/{agent}", h.pageMemory, tokenOnly),
		page("GET /agents/{agent}/archive/{file}", h.pageArchive, tokenOnly),
		page("GET /agents/{agent}/sessions/{file}", h.pageSession, tokenOnly),
		page("GET /agents/{agent}/condense", h.pageCondense, tokenOnly),
		page("GET /agents/{agent}/backups", h.pageBackups, tokenOnly),
		page("GET /events", h.pageEvents, tokenOnly),
		page("GET /settings", h.pageSettings, tokenOnly),
		page("GET /login", h.pageLogin, public),
		page("POST /login", h.postLogin, public),
		page("POST /logout", h.postLogout, tokenOnly),
		page("GET /static/{file}", h.serveStatic, public),
		page("GET /favicon.ico", notFound, public),
		page("/", notFound, tokenOnly),
	}
}

// APIRoutes lists the JSON API's routes (method and path pattern) as the
// route table holds them, in the order of docs/api.md's table.
func APIRoutes() []string {
	var out []string
	for _, rt := range (&Handler{}).routeTable() {
		if _, path, ok := strings.Cut(rt.pattern, " "); ok && strings.HasPrefix(path, "/api/v1/") {
			out = append(out, rt.pattern)
		}
	}
	return out
}

func (h *Handler) routes() {
	m := http.NewServeMux()
	h.public = map[string]bool{}
	for _, rt := range h.routeTable() {
		m.Handle(rt.pattern, rt.handler)
		if rt.access == public {
			h.public[rt.pattern] = true
		}
	}
	h.mux = m
}

// apiManager is GET /api/v1/manager: the running manager's own status
// (Deps.ManagerStatus), 404 when the handler runs without a manager.
func (h *Handler) apiManager(w http.ResponseWriter, r *http.Request) error {
	if h.manager == nil {
		return errNotFound("no manager runs with this server")
	}
	writeJSON(w, http.StatusOK, h.manager(r.Context()))
	return nil
}

// apiUnknown answers what no API route matches: 405 with Allow when the
// path exists under another method, else 404.
func (h *Handler) apiUnknown(w http.ResponseWriter, r *http.Request) error {
	if allow := h.allowed(r); len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		return statusError(http.StatusMethodNotAllowed, fmt.Errorf("%s is not allowed on %s (allowed: %s)", r.Method, r.URL.Path, strings.Join(allow, ", ")))
	}
	return errNotFound("no API endpoint %s %s (see docs/api.md)", r.Method, r.URL.Path)
}

// allowed lists the methods the API serves at r's path, so that a wrong
// method gets 405 rather than the catch-all's 404.
func (h *Handler) allowed(r *http.Request) []string {
	var out []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPatch} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := h.mux.Handler(probe); pattern != "" && pattern != "/api/" {
			out = append(out, m)
		}
	}
	return out
}

// contentSecurityPolicy allows only the handler's own script and style
// files: no inline script or style, no eval, no framing, no foreign hosts.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; manifest-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// ServeHTTP sets the security headers, applies the guard when configured,
// and routes.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", contentSecurityPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	// same-origin, not no-referrer: with no-referrer browsers send
	// "Origin: null" on same-origin POSTs, which the CSRF check refuses.
	hd.Set("Referrer-Policy", "same-origin")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	hd.Set("Cross-Origin-Resource-Policy", "same-origin")
	if h.guard != nil && !h.guarded(w, r) {
		return
	}
	h.mux.ServeHTTP(w, r)
}

// guarded applies Deps.Guard and reports whether the request may go on.
// It follows httpguard.Wrap, except that the login page and the static
// assets need no token and that a browser asking for a page without one is
// sent to the login page instead of getting a bare 401.
func (h *Handler) guarded(w http.ResponseWriter, r *http.Request) bool {
	g := h.guard
	if err := g.CheckHost(r); err != nil {
		h.fail(w, r, http.StatusMisdirectedRequest, err)
		return false
	}
	if err := httpguard.CheckOrigin(r); err != nil {
		h.fail(w, r, http.StatusForbidden, fmt.Errorf("forbidden: %w", err))
		return false
	}
	maxBody := g.MaxBody
	if maxBody <= 0 {
		maxBody = httpguard.DefaultMaxBody
	}
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	}
	if g.Token == "" || httpguard.Authorized(r, g.Token) || h.isPublic(r) {
		return true
	}
	if r.Method == http.MethodGet && !isAPI(r) {
		http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
		return false
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="hivemem"`)
	h.fail(w, r, http.StatusUnauthorized, errors.New("unauthorized: a valid bearer token (or the "+httpguard.CookieName+" cookie from /login) is required"))
	return false
}

// isPublic says whether the route r goes to needs no token (the access
// column of the route table). A path that is not clean is judged by the
// route it redirects to.
func (h *Handler) isPublic(r *http.Request) bool {
	_, pattern := h.mux.Handler(r)
	return h.public[pattern]
}

func isAPI(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/api/") }

// fail answers an error the way the caller can read it: JSON for the API,
// a page for a browser.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, status int, err error) {
	if isAPI(r) || r.Method != http.MethodGet {
		writeJSON(w, status, apiError{Error: err.Error()})
		return
	}
	h.renderError(w, r, status, err)
}

// apiError is the body of every API error response.
type apiError struct {
	Error string `json:"error"`
}

// httpError is an error with the HTTP status it should be answered with.
type httpError struct {
	status int
	err    error
}

func (e *httpError) Error() string { return e.err.Error() }
func (e *httpError) Unwrap() error { return e.err }

func statusError(status int, err error) error { return &httpError{status: status, err: err} }

func errBadRequest(format string, a ...any) error {
	return statusError(http.StatusBadRequest, fmt.Errorf(format, a...))
}

func errNotFound(format string, a ...any) error {
	return statusError(http.StatusNotFound, fmt.Errorf(format, a...))
}

// statusOf picks the HTTP status for an error, the one place the web maps
// the app's error kinds: the status it carries (httpError), 413 for an
// oversize body, then by app.Kind: bad input 400, an unknown agent,
// backup, wing or room 404, a request the home's state refuses 409, one
// it cannot serve now (a lock held past the wait, a cancelled or timed-out
// request) 503; any other error 500.
func statusOf(err error) int {
	var he *httpError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &he):
		return he.status
	case errors.As(err, &mbe):
		return http.StatusRequestEntityTooLarge
	}
	switch app.Kind(err) {
	case app.ErrInvalid:
		return http.StatusBadRequest
	case app.ErrNotFound:
		return http.StatusNotFound
	case app.ErrConflict:
		return http.StatusConflict
	case app.ErrUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// apiFunc is an API endpoint: it writes its success response itself and
// returns errors, which ServeHTTP answers as JSON with the right status.
type apiFunc func(w http.ResponseWriter, r *http.Request) error

func (fn apiFunc) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := fn(w, r); err != nil {
		st := statusOf(err)
		writeJSON(w, st, apiError{Error: err.Error()})
	}
}

// writeJSON writes v as the response. Memory text goes out as JSON string
// data with HTML-significant characters escaped, so even a client that
// wrongly renders a response as HTML gets no markup from it.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v) // the client went away; nothing left to tell it
}

// maxJSONBody caps the JSON bodies the API accepts; the largest legitimate
// one (a settings update) is a few hundred bytes.
const maxJSONBody = 64 << 10

// decodeJSON reads a JSON object body into v, refusing unknown fields,
// duplicate keys, trailing data and bodies over maxJSONBody. An empty body
// leaves v as is when allowEmpty is set.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any, allowEmpty bool) error {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(strings.ToLower(ct), "application/json") {
		return statusError(http.StatusUnsupportedMediaType, fmt.Errorf("content type %q: want application/json", ct))
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxJSONBody))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return statusError(http.StatusRequestEntityTooLarge, fmt.Errorf("request body is over %d bytes", mbe.Limit))
	case err != nil:
		return errBadRequest("read body: %v", err)
	}
	if err := duplicateKey(data); err != nil {
		return errBadRequest("bad JSON body: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		switch {
		case errors.Is(err, io.EOF) && allowEmpty:
			return nil
		case errors.Is(err, io.EOF):
			return errBadRequest("request body is empty: want a JSON object")
		}
		return errBadRequest("bad JSON body: %v", err)
	}
	if dec.More() {
		return errBadRequest("bad JSON body: trailing data after the object")
	}
	return nil
}

// duplicateKey reports a key given twice in one object of a JSON text
// (compared as encoding/json matches fields, ignoring case): the decoder
// would silently keep the last, so `{"recent_keep": 3, "recent_keep": 0}`
// means what its reader did not see. Malformed JSON is left to the
// decoder.
func duplicateKey(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		object bool
		keys   map[string]bool
		key    bool // the next token of an object is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil // the end, or malformed: Decode says which
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.key {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].object {
					stack[len(stack)-1].key = true
				}
				continue
			}
			k, _ := tok.(string)
			fold := strings.ToLower(k)
			if top.keys[fold] {
				return fmt.Errorf("key %q given twice", k)
			}
			top.keys[fold] = true
			top.key = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, keys: map[string]bool{}, key: true})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		// A value ended: an enclosing object expects a key next.
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].key = true
		}
	}
}
