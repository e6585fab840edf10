package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/httpguard"
)

// StatusReport is GET /api/v1/status.
type StatusReport struct {
	Version string    `json:"version"`
	Time    time.Time `json:"time"`
	// Status is the app's: the home, the index, the condensation set-up,
	// mining and every agent (app.AgentStatus), the object `hivemem
	// status --json` and MCP memory_status report; /api/v1/agents adds
	// the dashboard's health grades.
	app.Status
	Reflector ReflectorStatus `json:"reflector"`
	Auth      AuthInfo        `json:"auth"`
	// Manager is the manager's own report, null without a manager.
	Manager *app.ManagerStatus `json:"manager"`
}

// ReflectorStatus is the reflector's configuration at a glance.
type ReflectorStatus struct {
	Enabled    bool   `json:"enabled"`
	Interval   string `json:"interval"`
	Summarizer string `json:"summarizer"`
	Backoffs   int    `json:"agents_in_backoff"`
}

// AuthInfo says how the server is protected, so the UI can tell.
type AuthInfo struct {
	Guarded       bool   `json:"guarded"` // the handler applies httpguard itself
	Addr          string `json:"addr,omitempty"`
	Loopback      bool   `json:"loopback"`
	TokenRequired bool   `json:"token_required"`
}

// managerStatus is the running manager's status, nil without one.
func (h *Handler) managerStatus(ctx context.Context) *app.ManagerStatus {
	if h.manager == nil {
		return nil
	}
	ms := h.manager(ctx)
	return &ms
}

// appStatus is the app's status, with the manager's when one runs: its
// agents then carry their mining state.
func (h *Handler) appStatus(ctx context.Context) (app.Status, *app.ManagerStatus, error) {
	ms := h.managerStatus(ctx)
	st, err := h.app.Status(ctx, app.StatusRequest{Manager: ms})
	return st, ms, err
}

func (h *Handler) status(r *http.Request) (StatusReport, error) {
	st, ms, err := h.appStatus(r.Context())
	if err != nil {
		return StatusReport{}, err
	}
	cfg := h.cfg()
	rep := StatusReport{
		Version: h.version, Time: time.Now().UTC(), Status: st,
		Reflector: ReflectorStatus{
			Enabled: cfg.Reflector.Enabled, Interval: duration(cfg.Reflector.Interval.Duration), Summarizer: st.Condense.Summarizer,
		},
	}
	for _, a := range st.Agents {
		if a.ReflectorBackoff != nil {
			rep.Reflector.Backoffs++
		}
	}
	if g := h.guard; g != nil {
		rep.Auth = AuthInfo{Guarded: true, Addr: g.Addr, Loopback: httpguard.IsLoopback(g.Addr), TokenRequired: g.Token != ""}
	}
	rep.Manager = ms
	return rep, nil
}

func (h *Handler) apiStatus(w http.ResponseWriter, r *http.Request) error {
	rep, err := h.status(r)
	return answer(w, rep, err)
}

func (h *Handler) apiAgents(w http.ResponseWriter, r *http.Request) error {
	st, ms, err := h.appStatus(r.Context())
	if err != nil {
		return err
	}
	as, err := h.agentSummaries(r.Context(), st.Agents, ms)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, AgentList{Agents: as})
	return nil
}

func (h *Handler) apiAgent(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("agent")
	_, data, err := h.agentFile(r.Context(), id)
	if err != nil {
		return err
	}
	s, err := h.agentSummary(r.Context(), id, data)
	return answer(w, s, err)
}

func (h *Handler) apiMemory(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("agent")
	m, err := h.agentMemory(r.Context(), id)
	if err != nil {
		return err
	}
	data := []byte(m.Raw)
	switch f := r.URL.Query().Get("format"); f {
	case "", "json":
		writeJSON(w, http.StatusOK, m)
	case "raw":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Disposition", `inline; filename="memory.md"`)
		_, _ = w.Write(data)
	default:
		return errBadRequest("format %q: want json or raw", f)
	}
	return nil
}

// SearchResponse is GET /api/v1/search: the app's search result, the
// same object as `hivemem search --json` and MCP memory_search.
type SearchResponse = app.SearchResult

// parseSearch turns query parameters into a search request (the app
// validates it); only a results value that is no number is refused here.
func parseSearch(q url.Values) (app.SearchRequest, error) {
	req := app.SearchRequest{Query: q.Get("q"), Mode: q.Get("mode"),
		Wing: strings.TrimSpace(q.Get("wing")), Room: strings.TrimSpace(q.Get("room")),
		Agent: strings.TrimSpace(q.Get("agent")), Since: q.Get("since"), Until: q.Get("until"), AsOf: q.Get("as_of")}
	if s := q.Get("include_superseded"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return req, errBadRequest("include_superseded %q: want true or false", s)
		}
		req.IncludeSuperseded = b
	}
	if s := q.Get("results"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return req, errBadRequest("results %q: want a number from 1 to %d", s, app.MaxResults)
		}
		req.Results, req.ResultsGiven = n, true // the app checks the range, 0 included
	}
	return req, nil
}

// appError gives the app's error for an empty query the API's words (q is
// the parameter); every other error is mapped by its kind where ServeHTTP
// and pageFail answer it (statusOf).
func appError(err error) error {
	if errors.Is(err, app.ErrEmptyQuery) {
		return errBadRequest("q is empty: give some text to search for")
	}
	return err
}

// answer returns what an API endpoint that is one app operation returns:
// its result written as the response, or its error mapped (appError) for
// ServeHTTP to answer.
func answer[T any](w http.ResponseWriter, res T, err error) error {
	if err != nil {
		return appError(err)
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// search runs req and links every hit to the viewer page that shows it.
func (h *Handler) search(ctx context.Context, req app.SearchRequest) (app.SearchResult, error) {
	res, err := h.app.Search(ctx, req)
	if err != nil {
		return res, appError(err)
	}
	for i, hit := range res.Hits {
		res.Hits[i].View = h.viewURL(hit.Source, hit.LineStart, hit.LineEnd, req.Query)
	}
	return res, nil
}

// onlyParams refuses a query parameter that is none of names (a typo such
// as "asof" was ignored: the answer to another question), as MCP refuses
// an argument its tool does not have, and one given twice with different
// values (only the first was read, the other silently dropped).
func onlyParams(q url.Values, names ...string) error {
	for k, vs := range q {
		if !slices.Contains(names, k) {
			return errBadRequest("unknown parameter %q (want %s)", k, strings.Join(names, ", "))
		}
		for _, v := range vs[1:] {
			if v != vs[0] {
				return errBadRequest("parameter %q given %d times with different values (%q, %q): give it once", k, len(vs), vs[0], v)
			}
		}
	}
	return nil
}

// searchParams are the parameters of GET /api/v1/search (parseSearch).
var searchParams = []string{"q", "wing", "room", "agent", "since", "until", "as_of", "results", "mode", "include_superseded"}

func (h *Handler) apiSearch(w http.ResponseWriter, r *http.Request) error {
	if err := onlyParams(r.URL.Query(), searchParams...); err != nil {
		return err
	}
	req, err := parseSearch(r.URL.Query())
	if err != nil {
		return err
	}
	resp, err := h.search(r.Context(), req)
	return answer(w, resp, err)
}

// archiveNameRE matches the archive files the reflector writes (and any
// other plain .md name), never a path or a hidden temp file.
var archiveNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}\.md$`)

// viewURL is the viewer page of a source file (an agent's memory, one of
// its archive files or one of its session files) at lines from..to, with the query's terms marked;
// "" for a source outside the hive.
func (h *Handler) viewURL(source string, from, to int, q string) string {
	id, archive, ok := h.app.Home().AgentFromPath(h.app.Home().Abs(source))
	sid, session := h.app.Home().SessionFromPath(h.app.Home().Abs(source))
	if session {
		id, ok = sid, true
	}
	if !ok {
		return ""
	}
	p := "/agents/" + url.PathEscape(id)
	if session {
		name := source[strings.LastIndexByte(source, '/')+1:]
		if !sessionNameRE.MatchString(name) {
			return ""
		}
		p += "/sessions/" + url.PathEscape(name)
	}
	if archive {
		name := source[strings.LastIndexByte(source, '/')+1:]
		if !archiveNameRE.MatchString(name) {
			return ""
		}
		p += "/archive/" + url.PathEscape(name)
	}
	v := url.Values{}
	if from > 0 {
		v.Set("from", strconv.Itoa(from))
		v.Set("to", strconv.Itoa(max(from, to)))
	}
	if q != "" {
		v.Set("q", q)
	}
	if len(v) > 0 {
		p += "?" + v.Encode()
	}
	if from > 0 {
		p += "#L" + strconv.Itoa(from)
	}
	return p
}

func (h *Handler) apiWakeUp(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if err := onlyParams(q, "wing", "budget"); err != nil {
		return err
	}
	req := app.WakeUpRequest{Wing: strings.TrimSpace(q.Get("wing"))}
	if s := q.Get("budget"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return errBadRequest("budget %q: want a number of tokens from 1 to %d", s, app.MaxWakeUpBudget)
		}
		req.Budget, req.BudgetGiven = n, true // the app checks the range, 0 included
	}
	res, err := h.app.WakeUp(r.Context(), req)
	return answer(w, res, err)
}

// condenseRequest is the body of POST .../condense (dry_run, force,
// if_match); the agent comes from the path.
type condenseRequest = app.CondenseRequest

// CondenseResponse is the app's condense result: the reflector's, with a
// dry run's would-be file and its diff against the current one.
type CondenseResponse = app.CondenseResult

func (h *Handler) apiCondense(w http.ResponseWriter, r *http.Request) error {
	var req condenseRequest
	if err := decodeJSON(w, r, &req, true); err != nil {
		return err
	}
	req.Agent = r.PathValue("agent")
	res, err := h.app.Condense(r.Context(), req)
	if err != nil && !app.Aborted(err) {
		return appError(err)
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// BackupInfo is one backup of an agent's memory file.
type BackupInfo = app.BackupInfo

func (h *Handler) apiBackups(w http.ResponseWriter, r *http.Request) error {
	bs, err := h.app.Backups(r.Context(), app.BackupsRequest{})
	return answer(w, BackupList{Backups: bs}, err)
}

func (h *Handler) apiAgentBackups(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("agent")
	bs, err := h.app.Backups(r.Context(), app.BackupsRequest{Agent: id})
	return answer(w, BackupList{Agent: id, Backups: bs}, err)
}

// BackupDetail is one backup with what restoring it would change.
type BackupDetail = app.BackupDetail

func (h *Handler) apiBackup(w http.ResponseWriter, r *http.Request) error {
	req := app.BackupRequest{Agent: r.PathValue("agent"), Name: r.PathValue("backup")}
	switch c := r.URL.Query().Get("content"); c {
	case "", "0", "false":
	case "1", "true":
		req.Content = true
	default:
		return errBadRequest("content %q: want true or false", c)
	}
	res, err := h.app.Backup(r.Context(), req)
	return answer(w, res, err)
}

func (h *Handler) apiRestore(w http.ResponseWriter, r *http.Request) error {
	req := app.RestoreRequest{Agent: r.PathValue("agent"), Backup: r.PathValue("backup")}
	var body struct{}
	if err := decodeJSON(w, r, &body, true); err != nil {
		return err
	}
	res, err := h.app.Restore(r.Context(), req)
	return answer(w, res, err)
}
