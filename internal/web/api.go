package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/diff"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/httpguard"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/reflector"
	"github.com/hivemem/hivemem/internal/store"
)

// StatusReport is GET /api/v1/status.
type StatusReport struct {
	Version    string           `json:"version"`
	Time       time.Time        `json:"time"`
	Home       string           `json:"home"`
	SearchMode string           `json:"search_mode"`
	Embedder   app.EmbedderInfo `json:"embedder"`
	Index      store.Stats      `json:"index"`
	Reflector  ReflectorStatus  `json:"reflector"`
	// Agents is every agent's status, the object `hivemem status --json`
	// and MCP memory_status list (app.CollectAgents); /api/v1/agents adds
	// the dashboard's health grades.
	Agents []app.AgentStatus `json:"agents"`
	Auth   AuthInfo          `json:"auth"`
	// Manager is the manager's own report, null without a manager.
	Manager any `json:"manager"`
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

func (h *Handler) status(r *http.Request) (StatusReport, error) {
	ctx := r.Context()
	st, err := h.app.Store.Stats(ctx)
	if err != nil {
		return StatusReport{}, fmt.Errorf("status: %w", err)
	}
	cfg := h.cfg()
	agents, err := h.app.CollectAgents(ctx, cfg, st, h.lastCondensed())
	if err != nil {
		return StatusReport{}, err
	}
	if agents == nil {
		agents = []app.AgentStatus{}
	}
	rep := StatusReport{
		Version: h.version, Time: time.Now().UTC(), Home: h.app.Home.Root, SearchMode: h.app.Palace.Mode(),
		Embedder: h.app.Embedder, Agents: agents,
		Index: st,
		Reflector: ReflectorStatus{
			Enabled: cfg.Reflector.Enabled, Interval: duration(cfg.Reflector.Interval.Duration), Summarizer: h.refl.Summarizer(),
		},
	}
	if rep.Index.Backend == "" {
		rep.Index.Backend = h.app.Store.Backend()
	}
	if rep.Index.Wings == nil {
		rep.Index.Wings = []store.WingStats{}
	}
	for _, s := range h.refl.States() {
		if s.Failures > 0 {
			rep.Reflector.Backoffs++
		}
	}
	if g := h.guard; g != nil {
		rep.Auth = AuthInfo{Guarded: true, Addr: g.Addr, Loopback: httpguard.IsLoopback(g.Addr), TokenRequired: g.Token != ""}
	}
	if h.manager != nil {
		rep.Manager = h.manager()
	}
	return rep, nil
}

func (h *Handler) apiStatus(w http.ResponseWriter, r *http.Request) error {
	rep, err := h.status(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rep)
	return nil
}

func (h *Handler) apiAgents(w http.ResponseWriter, r *http.Request) error {
	as, err := h.agentSummaries(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, AgentList{Agents: as})
	return nil
}

func (h *Handler) apiAgent(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("agent")
	_, data, err := h.agentFile(id)
	if err != nil {
		return err
	}
	sc, err := h.newSummaryContext(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, h.summarize(r.Context(), sc, id, data))
	return nil
}

func (h *Handler) apiMemory(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("agent")
	path, data, err := h.agentFile(id)
	if err != nil {
		return err
	}
	switch f := r.URL.Query().Get("format"); f {
	case "", "json":
		writeJSON(w, http.StatusOK, h.memoryView(id, path, data))
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
		Agent: strings.TrimSpace(q.Get("agent")), Since: q.Get("since"), Until: q.Get("until")}
	if s := q.Get("results"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return req, errBadRequest("results %q: want a number from 1 to %d", s, palace.MaxResults)
		}
		req.Results = n
	}
	return req, nil
}

// searchError maps the app's search errors onto HTTP statuses.
func searchError(err error) error {
	switch {
	case errors.Is(err, palace.ErrEmptyQuery):
		return errBadRequest("q is empty: give some text to search for")
	case errors.Is(err, palace.ErrBadQuery), errors.Is(err, palace.ErrNoWords):
		return statusError(http.StatusBadRequest, err)
	case errors.Is(err, palace.ErrUnknownWing), errors.Is(err, palace.ErrUnknownRoom):
		return statusError(http.StatusNotFound, err)
	}
	return err
}

// search runs req and links every hit to the viewer page that shows it.
func (h *Handler) search(ctx context.Context, req app.SearchRequest) (app.SearchResult, error) {
	res, err := h.app.Search(ctx, req)
	if err != nil {
		return res, searchError(err)
	}
	for i, hit := range res.Hits {
		res.Hits[i].View = h.viewURL(hit.Source, hit.LineStart, hit.LineEnd, req.Query)
	}
	return res, nil
}

func (h *Handler) apiSearch(w http.ResponseWriter, r *http.Request) error {
	req, err := parseSearch(r.URL.Query())
	if err != nil {
		return err
	}
	resp, err := h.search(r.Context(), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// archiveNameRE matches the archive files the reflector writes (and any
// other plain .md name), never a path or a hidden temp file.
var archiveNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}\.md$`)

// viewURL is the viewer page of a source file (an agent's memory, one of
// its archive files or one of its session files) at lines from..to, with the query's terms marked;
// "" for a source outside the hive.
func (h *Handler) viewURL(source string, from, to int, q string) string {
	id, archive, ok := h.app.Home.AgentFromPath(h.app.Home.Abs(source))
	sid, session := h.app.Home.SessionFromPath(h.app.Home.Abs(source))
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
	req := app.WakeUpRequest{Wing: strings.TrimSpace(q.Get("wing"))}
	if s := q.Get("budget"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return errBadRequest("budget %q: want a number of tokens from 1 to %d", s, palace.MaxWakeUpBudget)
		}
		req.Budget = n
	}
	d, err := h.app.WakeUp(r.Context(), req)
	if err != nil {
		return searchError(err)
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}

// condenseRequest is the body of POST .../condense.
type condenseRequest struct {
	DryRun bool `json:"dry_run"`
	Force  bool `json:"force"`
	// IfMatch is the sha256 of the file the caller previewed; the
	// condensation is refused with 409 when the file changed since.
	IfMatch string `json:"if_match"`
}

// CondenseResponse is the reflector's result, with a dry run's would-be
// file and its diff against the current one.
type CondenseResponse struct {
	reflector.Result
	BeforeSHA256 string `json:"before_sha256,omitempty"`
	Output       string `json:"output,omitempty"`
	Diff         string `json:"diff,omitempty"`
}

var sha256RE = regexp.MustCompile(`^[0-9a-f]{64}$`)

func (h *Handler) apiCondense(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("agent")
	_, data, err := h.agentFile(id)
	if err != nil {
		return err
	}
	var req condenseRequest
	if err := decodeJSON(w, r, &req, true); err != nil {
		return err
	}
	if req.IfMatch != "" {
		if !sha256RE.MatchString(req.IfMatch) {
			return errBadRequest("if_match %q: want the file's sha256 as 64 lowercase hex digits", req.IfMatch)
		}
		if got := sha256Hex(data); got != req.IfMatch {
			return statusError(http.StatusConflict, fmt.Errorf("the memory file of %s changed since the preview (sha256 %s, expected %s): preview again", id, got[:12], req.IfMatch[:12]))
		}
	}
	res, err := h.refl.Condense(r.Context(), id, reflector.Options{DryRun: req.DryRun, Force: req.Force})
	var ae *reflector.AbortError
	if err != nil && !errors.As(err, &ae) {
		return err
	}
	out := CondenseResponse{Result: res}
	if res.Status == reflector.StatusDryRun {
		out.BeforeSHA256 = sha256Hex(res.Before)
		out.Output = string(res.Output)
		out.Diff = string(diff.Diff(id+"/memory.md", res.Before, id+"/memory.md (condensed)", res.Output))
	}
	if res.Status == reflector.StatusCondensed {
		h.log.Info("web: condensed", "agent", id, "old_bytes", res.OldBytes, "new_bytes", res.NewBytes, "backup", res.Backup)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// BackupInfo is one backup of an agent's memory file.
type BackupInfo struct {
	Agent string    `json:"agent"`
	Name  string    `json:"name"`
	Path  string    `json:"path"` // relative to the home
	Size  int64     `json:"size"`
	Time  time.Time `json:"time"`
}

func (h *Handler) backupInfos(agent string) ([]BackupInfo, error) {
	bs, err := reflector.Backups(h.app.Home, agent)
	if err != nil {
		return nil, err
	}
	out := make([]BackupInfo, 0, len(bs))
	for _, b := range bs {
		out = append(out, BackupInfo{Agent: b.Agent, Name: b.Name, Path: h.app.Home.Rel(b.Path), Size: b.Size, Time: b.Time})
	}
	return out, nil
}

func (h *Handler) apiBackups(w http.ResponseWriter, r *http.Request) error {
	bs, err := h.backupInfos("")
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, BackupList{Backups: bs})
	return nil
}

func (h *Handler) apiAgentBackups(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("agent")
	if err := home.ValidateAgentID(id); err != nil {
		return statusError(http.StatusBadRequest, err)
	}
	bs, err := h.backupInfos(id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, BackupList{Agent: id, Backups: bs})
	return nil
}

// backupNameRE is the form of a backup name (a UTC stamp, maybe with a
// "-N" suffix), checked before any lookup.
var backupNameRE = regexp.MustCompile(`^\d{8}T\d{6}Z(?:-[1-9]\d{0,5})?$`)

// findBackup resolves agent and backup name (or "latest") from a request:
// 400 for malformed ones, 404 for a backup that does not exist.
func (h *Handler) findBackup(agent, name string) (reflector.Backup, error) {
	if err := home.ValidateAgentID(agent); err != nil {
		return reflector.Backup{}, statusError(http.StatusBadRequest, err)
	}
	if name != reflector.Latest && !backupNameRE.MatchString(name) {
		return reflector.Backup{}, errBadRequest("backup name %q: want a stamp such as 20261129T135100Z, or %q", name, reflector.Latest)
	}
	bs, err := reflector.Backups(h.app.Home, agent)
	if err != nil {
		return reflector.Backup{}, err
	}
	for _, b := range bs {
		if name == reflector.Latest || b.Name == name {
			return b, nil
		}
	}
	if name == reflector.Latest {
		return reflector.Backup{}, errNotFound("agent %s has no backups", agent)
	}
	return reflector.Backup{}, errNotFound("agent %s has no backup %s", agent, name)
}

// BackupDetail is one backup with what restoring it would change.
type BackupDetail struct {
	BackupInfo
	CurrentSHA256 string `json:"current_sha256,omitempty"`
	BackupSHA256  string `json:"backup_sha256"`
	Identical     bool   `json:"identical"`
	// Diff turns the current file into the backup: what a restore changes.
	Diff    string `json:"diff"`
	Content string `json:"content,omitempty"`
}

func (h *Handler) backupDetail(agent, name string, withContent bool) (BackupDetail, error) {
	b, err := h.findBackup(agent, name)
	if err != nil {
		return BackupDetail{}, err
	}
	data, err := h.app.Home.ReadFile(b.Path)
	if err != nil {
		return BackupDetail{}, fmt.Errorf("read backup %s of %s: %w", b.Name, agent, err)
	}
	path, _ := h.app.Home.MemoryPath(agent)
	cur, err := h.app.Home.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return BackupDetail{}, fmt.Errorf("read memory of %s: %w", agent, err)
	}
	d := BackupDetail{
		BackupInfo:   BackupInfo{Agent: b.Agent, Name: b.Name, Path: h.app.Home.Rel(b.Path), Size: b.Size, Time: b.Time},
		BackupSHA256: sha256Hex(data), Identical: string(cur) == string(data),
	}
	if cur != nil {
		d.CurrentSHA256 = sha256Hex(cur)
	}
	d.Diff = string(diff.Diff(agent+"/memory.md (current)", cur, agent+"/memory.md (backup "+b.Name+")", data))
	if withContent {
		d.Content = string(data)
	}
	return d, nil
}

func (h *Handler) apiBackup(w http.ResponseWriter, r *http.Request) error {
	withContent := false
	switch c := r.URL.Query().Get("content"); c {
	case "", "0", "false":
	case "1", "true":
		withContent = true
	default:
		return errBadRequest("content %q: want true or false", c)
	}
	d, err := h.backupDetail(r.PathValue("agent"), r.PathValue("backup"), withContent)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}

func (h *Handler) apiRestore(w http.ResponseWriter, r *http.Request) error {
	agent, name := r.PathValue("agent"), r.PathValue("backup")
	b, err := h.findBackup(agent, name)
	if err != nil {
		return err
	}
	var req struct{}
	if err := decodeJSON(w, r, &req, true); err != nil {
		return err
	}
	res, err := h.refl.Restore(r.Context(), agent, b.Name)
	if err != nil {
		return err
	}
	h.log.Info("web: restored", "agent", agent, "backup", res.Backup, "pre_restore_backup", res.PreRestoreBackup)
	writeJSON(w, http.StatusOK, res)
	return nil
}
