package web

import (
	"github.com/dustin/go-humanize"

	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"math"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/httpguard"
	"github.com/hivemem/hivemem/internal/mdhtml"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// staticFile is one embedded asset with its content hash, which versions
// its URL so browsers can cache it for good.
type staticFile struct {
	data  []byte
	ctype string
	hash  string
}

func mustLoadStatic() map[string]staticFile {
	out := map[string]staticFile{}
	err := fs.WalkDir(staticFS, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := staticFS.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		ct := mime.TypeByExtension(path.Ext(p))
		if ct == "" {
			ct = "application/octet-stream"
		}
		out[path.Base(p)] = staticFile{data: data, ctype: ct, hash: hex.EncodeToString(sum[:6])}
		return nil
	})
	if err != nil {
		panic("web: embedded static files: " + err.Error())
	}
	return out
}

func (h *Handler) serveStatic(w http.ResponseWriter, r *http.Request) {
	f, ok := h.static[r.PathValue("file")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", f.ctype)
	if r.URL.Query().Get("v") == f.hash {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
	w.Header().Set("ETag", `"`+f.hash+`"`)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(f.data))
}

// pages holds one template set per page, each with the shared layout.
type pages struct {
	byName map[string]*template.Template
}

// pageNames are the templates under templates/ besides the layout.
var pageNames = []string{"overview", "search", "memory", "condense", "backups", "events", "settings", "login", "error"}

func mustParsePages() *pages {
	p := &pages{byName: map[string]*template.Template{}}
	base := template.Must(template.New("layout.html").Funcs(templateFuncs).ParseFS(templateFS, "templates/layout.html"))
	for _, n := range pageNames {
		t := template.Must(template.Must(base.Clone()).ParseFS(templateFS, "templates/"+n+".html"))
		p.byName[n] = t
	}
	return p
}

// pageData is what every page template gets.
type pageData struct {
	Title   string
	Page    string // the template, also the nav key and body data-page
	Version string
	Auth    AuthInfo
	Assets  map[string]string // asset name → versioned URL
	Data    any
}

var templateFuncs = template.FuncMap{
	"bytes": func(n int64) string { return humanize.IBytes(uint64(n)) },
	"pct": func(f float64) string {
		if f < 10 {
			return strconv.FormatFloat(f, 'f', 1, 64) + "%"
		}
		return strconv.FormatFloat(f, 'f', 0, 64) + "%"
	},
	"iso": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format(time.RFC3339)
	},
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "never"
		}
		return t.UTC().Format("2006-01-02 15:04 UTC")
	},
	"ago":       func(t time.Time) string { return relTime(t, time.Now()) },
	"sentence":  eventSentence,
	"kindwords": words,
	"icon":      icon,
	"bar":       sizeBar,
	"add":       func(a, b int) int { return a + b },
	"pathesc": func(s string) string {
		return strings.ReplaceAll(template.URLQueryEscaper(s), "+", "%20")
	},
}

// sizeBar draws size against budget, with a tick at the condensation
// trigger. Widths are classes (w0..w100, l0..l100 in app.css) because the
// CSP forbids inline styles.
func sizeBar(s AgentSummary) template.HTML {
	pct := func(n int64) int {
		if s.BudgetBytes <= 0 || n <= 0 {
			return 0
		}
		return int(min(100, max(1, math.Round(100*float64(n)/float64(s.BudgetBytes)))))
	}
	label := fmt.Sprintf("%s of %s budget; condensation above %s", humanize.IBytes(uint64(s.Bytes)), humanize.IBytes(uint64(s.BudgetBytes)), humanize.IBytes(uint64(s.TriggerBytes)))
	return template.HTML(fmt.Sprintf(`<div class="bar" role="img" aria-label="%s"><span class="fill %s w%d"></span><span class="trigger l%d"></span></div>`,
		template.HTMLEscapeString(label), template.HTMLEscapeString(s.Health), pct(s.Bytes), pct(s.TriggerBytes)))
}

// duration prints a duration without zero units: 30m, 1h, 1h30m.
func duration(d time.Duration) string { return app.ShortDuration(d) }

func (h *Handler) assets() map[string]string {
	m := make(map[string]string, len(h.static))
	for name, f := range h.static {
		m[name] = "/static/" + name + "?v=" + f.hash
	}
	return m
}

func (h *Handler) authInfo() AuthInfo {
	if g := h.guard; g != nil {
		return AuthInfo{Guarded: true, Addr: g.Addr, TokenRequired: g.Token != ""}
	}
	return AuthInfo{}
}

// render executes a page; a template failure is logged and answered as a
// plain 500, since the page itself is what failed.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name, title string, data any) {
	t, ok := h.pages.byName[name]
	if !ok {
		http.Error(w, "no page template "+name, http.StatusInternalServerError)
		return
	}
	var buf bytes.Buffer
	pd := pageData{Title: title, Page: name, Version: h.version, Auth: h.authInfo(), Assets: h.assets(), Data: data}
	if err := t.ExecuteTemplate(&buf, "layout.html", pd); err != nil {
		h.log.Error("web: render page", "page", name, "err", err)
		http.Error(w, "internal error rendering "+name, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = buf.WriteTo(w)
}

func (h *Handler) renderError(w http.ResponseWriter, r *http.Request, status int, err error) {
	h.render(w, r, status, "error", http.StatusText(status), map[string]any{"Status": status, "Message": err.Error()})
}

// pageFail answers a page request that failed with the error's status.
func (h *Handler) pageFail(w http.ResponseWriter, r *http.Request, err error) {
	st := statusOf(err)
	if st >= 500 {
		h.log.Error("web: page", "path", r.URL.Path, "err", err)
	}
	h.renderError(w, r, st, err)
}

// overviewData is the overview page.
type overviewData struct {
	Status StatusReport
	Agents []AgentSummary
	Totals struct {
		Bytes   int64
		Due     int
		Backoff int
	}
	Events       []EventItem
	EventsOffset int64
	Manager      []fact
}

func (h *Handler) pageOverview(w http.ResponseWriter, r *http.Request) {
	st, err := h.status(r)
	if err != nil {
		h.pageFail(w, r, err)
		return
	}
	as, err := h.agentSummaries(r.Context(), st.Agents, st.Manager)
	if err != nil {
		h.pageFail(w, r, err)
		return
	}
	// Agents that need a look come first.
	rank := map[string]int{HealthError: 0, HealthBackoff: 1, HealthDue: 2, HealthRestored: 3, HealthNear: 4, HealthOK: 5}
	sort.SliceStable(as, func(i, j int) bool { return rank[as[i].Health] < rank[as[j].Health] })
	d := overviewData{Status: st, Agents: as}
	if st.Manager != nil {
		d.Manager = managerFacts(st.Manager, time.Now())
	}
	for _, a := range as {
		d.Totals.Bytes += a.Bytes
		switch a.Health {
		case HealthDue:
			d.Totals.Due++
		case HealthBackoff:
			d.Totals.Backoff++
		}
	}
	ev, err := h.app.ListEvents(r.Context(), app.EventsRequest{N: 12})
	if err != nil {
		h.pageFail(w, r, err)
		return
	}
	d.Events, d.EventsOffset = reverse(ev.Events), ev.Offset
	h.render(w, r, http.StatusOK, "overview", "Overview", d)
}

func reverse[T any](s []T) []T {
	out := make([]T, len(s))
	for i, x := range s {
		out[len(s)-1-i] = x
	}
	return out
}

// searchData is the search page.
type searchData struct {
	Q, Wing, Room, Agent, Since, Until, Mode string
	// AsOf is the day the query is asked (as_of, as the API takes it):
	// a time the query names counts from it.
	AsOf     string
	Results  int
	Agents   []string
	Rooms    []string
	Wings    []string
	Searched bool
	Error    string
	Resp     app.SearchResult
	Hits     []hitView
	Lexical  bool
}

// hitView is one search hit as the page shows it.
type hitView struct {
	app.SearchHit
	HeadingHTML template.HTML
	SnippetHTML template.HTML
	Cut         bool
}

func (h *Handler) pageSearch(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d := searchData{
		Q: q.Get("q"), Wing: q.Get("wing"), Room: q.Get("room"), Agent: q.Get("agent"),
		Since: q.Get("since"), Until: q.Get("until"), AsOf: q.Get("as_of"), Mode: q.Get("mode"),
		Results: h.cfg().Search.Results,
	}
	if n, err := strconv.Atoi(q.Get("results")); err == nil {
		d.Results = n
	}
	c := h.app.SearchChoices(r.Context())
	d.Agents, d.Wings, d.Rooms, d.Lexical = c.Agents, c.Wings, c.Rooms, c.Lexical
	status := http.StatusOK
	if strings.TrimSpace(d.Q) != "" {
		d.Searched = true
		req, err := parseSearch(q)
		if err == nil {
			d.Resp, err = h.search(r.Context(), req)
		}
		if err != nil {
			status = statusOf(err)
			d.Error = err.Error()
		}
		terms := app.QueryTerms(d.Q)
		o := mdhtml.Options{Terms: terms}
		for _, hit := range d.Resp.Hits {
			hv := hitView{SearchHit: hit}
			heading := hit.Heading
			if heading == "" {
				heading = "(file header)"
			}
			hv.HeadingHTML = mdhtml.Inline(heading, o)
			text, cut := mdhtml.Snippet(strings.TrimSpace(hit.Text), terms, 600)
			hv.SnippetHTML, hv.Cut = mdhtml.Text(text, o), cut
			d.Hits = append(d.Hits, hv)
		}
	}
	title := "Search"
	if d.Searched {
		title = d.Q + " — Search"
	}
	h.render(w, r, status, "search", title, d)
}

// memoryData is the memory viewer page.
type memoryData struct {
	Agent     string
	File      string // archive or session file name, "" for memory.md
	Session   bool   // File is a session file (hive/agents/<id>/sessions/)
	Archives  []string
	Sessions  []app.SessionInfo
	Summary   AgentSummary
	View      MemoryView
	Regions   []regionView
	Raw       []rawLine
	RawMode   bool
	From, To  int
	Q         string
	Sections  int
	HasHeader bool
}

// regionView is a run of sections in one region, drawn as one box.
type regionView struct {
	Region   string // header, pinned, condensed, recent, plain
	Label    string
	Icon     string // drawn before Label (icons.go), "" for none
	Note     string
	Sections []sectionView
}

// sectionView is one rendered section.
type sectionView struct {
	SectionView
	HeadingHTML template.HTML
	BodyHTML    template.HTML
	// Icon stands for the emoji the heading starts with, drawn before
	// HeadingHTML, and Title is the heading without it (icons.go).
	Icon, Title string
	Hit         bool
	Marker      bool // the "## Recent" marker itself
}

type rawLine struct {
	N    int
	HTML template.HTML
	Hit  bool
}

var regionLabels = map[string][2]string{
	"header":    {"Header", "the lines before the first section"},
	"pinned":    {"Pinned facts", "durable facts: never condensed"},
	"condensed": {"Condensed history", "a rolling summary of evicted sections"},
	"recent":    {"Recent", "the newest sections, verbatim"},
	"plain":     {"Sections", "not condensed yet: every section verbatim"},
}

// regionIcons are the icons of the regions whose marker heading starts
// with an emoji.
var regionIcons = map[string]string{"pinned": "pin", "condensed": "clamp"}

func (h *Handler) pageMemory(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("agent")
	m, err := h.agentMemory(r.Context(), id)
	if err != nil {
		h.pageFail(w, r, err)
		return
	}
	data := []byte(m.Raw)
	d := h.viewerData(r, id, "")
	d.View = m
	if d.Summary, err = h.agentSummary(r.Context(), id, data); err != nil {
		h.pageFail(w, r, err)
		return
	}
	h.fillRegions(&d)
	h.render(w, r, http.StatusOK, "memory", id+" — Memory", d)
}

func (h *Handler) pageArchive(w http.ResponseWriter, r *http.Request) {
	id, name := r.PathValue("agent"), r.PathValue("file")
	if err := home.ValidateAgentID(id); err != nil {
		h.pageFail(w, r, statusError(http.StatusBadRequest, err))
		return
	}
	if !archiveNameRE.MatchString(name) {
		h.pageFail(w, r, errBadRequest("archive file %q: want a name such as 2026-11.md", name))
		return
	}
	d, ok := h.viewFile(w, r, app.AgentFileRequest{Agent: id, Kind: app.AgentFileArchive, Name: name})
	if !ok {
		return
	}
	h.render(w, r, http.StatusOK, "memory", id+" — archive "+name, d)
}

// pageSession shows one of an agent's imported session files.
func (h *Handler) pageSession(w http.ResponseWriter, r *http.Request) {
	id, name := r.PathValue("agent"), r.PathValue("file")
	if err := home.ValidateAgentID(id); err != nil {
		h.pageFail(w, r, statusError(http.StatusBadRequest, err))
		return
	}
	if !sessionNameRE.MatchString(name) {
		h.pageFail(w, r, errBadRequest("session file %q: want a name such as 2026-11-29-fix-login-3f2a9b0c.md", name))
		return
	}
	d, ok := h.viewFile(w, r, app.AgentFileRequest{Agent: id, Kind: app.AgentFileSession, Name: name})
	if !ok {
		return
	}
	d.Session = true
	for i := range d.Regions {
		if d.Regions[i].Region == "plain" {
			d.Regions[i].Label, d.Regions[i].Note = "Session", "an imported conversation, one section per exchange: never condensed"
		}
	}
	h.render(w, r, http.StatusOK, "memory", id+" — session "+name, d)
}

// viewFile reads an archive or session file of an agent (app.ReadAgentFile)
// and returns the viewer's data for it; false: the page has failed (404
// when the file does not exist).
func (h *Handler) viewFile(w http.ResponseWriter, r *http.Request, req app.AgentFileRequest) (memoryData, bool) {
	m, err := h.app.ReadAgentFile(r.Context(), req)
	if err != nil {
		h.pageFail(w, r, err)
		return memoryData{}, false
	}
	d := h.viewerData(r, req.Agent, req.Name)
	d.View = m
	h.fillRegions(&d)
	return d, true
}

// sessionNameRE is the form of the session file names hivemem writes.
var sessionNameRE = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}-[a-z0-9-]+\.md$`)

// viewerData reads the viewer's query: the hit's lines, the query to mark
// and raw mode.
func (h *Handler) viewerData(r *http.Request, id, file string) memoryData {
	q := r.URL.Query()
	d := memoryData{Agent: id, File: file, Q: q.Get("q"), RawMode: q.Get("view") == "raw"}
	d.From, _ = strconv.Atoi(q.Get("from"))
	d.To, _ = strconv.Atoi(q.Get("to"))
	if d.From < 0 {
		d.From = 0
	}
	if d.To < d.From {
		d.To = d.From
	}
	files, _ := h.app.AgentFiles(r.Context(), id) // what it could list: the page is the file
	for _, name := range files.Archives {
		if archiveNameRE.MatchString(name) {
			d.Archives = append(d.Archives, name)
		}
	}
	d.Sessions = files.Sessions
	return d
}

// fillRegions renders the file of d.View into region boxes (and the raw
// view). The sections of a file never condensed (no "## Recent" marker),
// recent in the app's region model, are drawn as one plain box.
func (h *Handler) fillRegions(d *memoryData) {
	v := d.View
	var terms []string
	if d.Q != "" && len(d.Q) <= 4096 {
		terms = app.QueryTerms(d.Q)
	}
	o := mdhtml.Options{From: d.From, To: d.To, Terms: terms}
	for _, l := range mdhtml.Lines(v.Raw, 1) {
		d.Raw = append(d.Raw, rawLine{N: l.N, HTML: mdhtml.Text(l.Text, o), Hit: o.Hit(l.N, l.N)})
	}
	if v.ParseError != "" {
		return // the page shows the parse error and the raw view
	}
	d.HasHeader = v.Header != ""
	if v.Header != "" {
		body := mdhtml.Blocks(v.Header, 1, o)
		d.Regions = append(d.Regions, regionView{Region: "header", Label: regionLabels["header"][0], Note: regionLabels["header"][1],
			Sections: []sectionView{{BodyHTML: body, SectionView: SectionView{StartLine: 1, EndLine: v.HeaderLines}}}})
	}
	plain := !slices.ContainsFunc(v.Sections, SectionView.Marker)
	for _, s := range v.Sections {
		sv := sectionView{SectionView: s, Marker: s.Marker()}
		sv.Icon, sv.Title = splitIcon(s.Heading)
		sv.HeadingHTML = mdhtml.Inline(sv.Title, o)
		// A hit that covers the heading marks the whole section; one that
		// starts inside it (a piece of a long section) marks its blocks.
		sv.Hit = o.From > 0 && o.From <= s.StartLine && s.StartLine <= o.To
		bo := o
		if sv.Hit {
			bo.From, bo.To = 0, 0
		}
		sv.BodyHTML = mdhtml.Blocks(s.Body, s.StartLine+1, bo)
		if s.Ordinary() {
			d.Sections++
		}
		region := s.Region
		if region == app.RegionRecent && plain {
			region = "plain"
		}
		if n := len(d.Regions); n > 0 && d.Regions[n-1].Region == region && region != "pinned" && region != "condensed" {
			d.Regions[n-1].Sections = append(d.Regions[n-1].Sections, sv)
			continue
		}
		lbl := regionLabels[region]
		d.Regions = append(d.Regions, regionView{Region: region, Label: lbl[0], Icon: regionIcons[region], Note: lbl[1], Sections: []sectionView{sv}})
	}
}

// condenseData is the condense page.
type condenseData struct {
	Agent   string
	Summary AgentSummary
	SHA256  string
	Enabled bool
	Keep    int
}

func (h *Handler) pageCondense(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("agent")
	_, data, err := h.agentFile(r.Context(), id)
	if err != nil {
		h.pageFail(w, r, err)
		return
	}
	sum, err := h.agentSummary(r.Context(), id, data)
	if err != nil {
		h.pageFail(w, r, err)
		return
	}
	cfg := h.cfg()
	d := condenseData{Agent: id, Summary: sum, SHA256: app.SHA256(data),
		Enabled: cfg.Reflector.Enabled, Keep: cfg.Reflector.RecentKeep}
	h.render(w, r, http.StatusOK, "condense", id+" — Condense", d)
}

// backupsData is the backups page.
type backupsData struct {
	Agent   string
	Backups []BackupInfo
	Size    int64
	Exists  bool
}

func (h *Handler) pageBackups(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("agent")
	bs, err := h.app.Backups(r.Context(), app.BackupsRequest{Agent: id})
	if err != nil {
		h.pageFail(w, r, appError(err))
		return
	}
	d := backupsData{Agent: id, Backups: bs}
	if p, err := h.app.Home().MemoryPath(id); err == nil {
		if st, err := os.Stat(p); err == nil {
			d.Exists, d.Size = true, st.Size()
		}
	}
	if !d.Exists && len(bs) == 0 {
		h.pageFail(w, r, errNotFound("agent %s has no memory file and no backups", id))
		return
	}
	h.render(w, r, http.StatusOK, "backups", id+" — Backups", d)
}

// eventsData is the events page.
type eventsData struct {
	Agent, Type string
	Agents      []string
	Types       []string
	Events      []EventItem
	Offset      int64
}

var eventTypes = []string{"condense", "condense-abort", "restore", "mine", "mine-failed", "remember", "pin",
	"supersede", "pin-replace", "unpin", "forget", "purge", "redact", "import", "session-expire", "hook-error",
	// the harness's own, in the shared hive log
	"spawn", "session", "drain", "drop", "archive", "app-start"}

func (h *Handler) pageEvents(w http.ResponseWriter, r *http.Request) {
	f := parseEventFilter(r)
	ev, err := h.app.ListEvents(r.Context(), app.EventsRequest{EventFilter: f, N: 200})
	if err != nil {
		h.pageFail(w, r, appError(err))
		return
	}
	d := eventsData{Agent: f.Agent, Type: f.Kind, Types: eventTypes, Events: reverse(ev.Events), Offset: ev.Offset}
	d.Agents, _ = h.app.Home().Agents()
	h.render(w, r, http.StatusOK, "events", "Events", d)
}

func (h *Handler) pageSettings(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusOK, "settings", "Settings", h.app.ReadSettings())
}

// loginData is the login page.
type loginData struct {
	Next  string
	Error string
	Need  bool
}

// safeNext keeps a post-login redirect on this site: it returns s when s
// is a path on this origin ("/agents/x?view=raw"), else "/". Refused are
// control characters and white space anywhere, raw or %-encoded in the
// path (browsers drop TAB, CR and LF from a URL, so "/\t/host" is
// "//host"), backslashes (browsers read "\" as "/"), a scheme, host or
// user, and a path that does not start with "/" or holds "//" ("///host",
// or "/.//host", which is "//host" once its dot segment is resolved).
func safeNext(s string) string {
	bad := func(r rune) bool { return r == '\\' || unicode.IsControl(r) || unicode.IsSpace(r) }
	if !strings.HasPrefix(s, "/") || !utf8.ValidString(s) || strings.ContainsFunc(s, bad) {
		return "/"
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" ||
		!strings.HasPrefix(u.Path, "/") || strings.Contains(u.Path, "//") || strings.ContainsFunc(u.Path, bad) {
		return "/"
	}
	return s
}

func (h *Handler) pageLogin(w http.ResponseWriter, r *http.Request) {
	d := loginData{Next: safeNext(r.URL.Query().Get("next")), Need: h.guard != nil && h.guard.Token != ""}
	h.render(w, r, http.StatusOK, "login", "Sign in", d)
}

func (h *Handler) postLogin(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		h.render(w, r, statusOf(err), "login", "Sign in", loginData{Next: "/", Error: "bad form: " + err.Error(), Need: true})
		return
	}
	next := safeNext(r.PostForm.Get("next"))
	if h.guard == nil || h.guard.Token == "" {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	// Trimming what was pasted is safe: config refuses a token with
	// surrounding whitespace.
	tok := strings.TrimSpace(r.PostForm.Get("token"))
	if tok == "" || subtle.ConstantTimeCompare([]byte(tok), []byte(h.guard.Token)) != 1 {
		h.log.Warn("web: failed login", "remote", r.RemoteAddr)
		h.render(w, r, http.StatusUnauthorized, "login", "Sign in", loginData{Next: next, Error: "That token is not right.", Need: true})
		return
	}
	// The cookie carries a value derived from the token, never the token.
	http.SetCookie(w, &http.Cookie{
		Name: httpguard.CookieName, Value: httpguard.CookieValue(tok), Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil, MaxAge: 30 * 24 * 3600,
	})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (h *Handler) postLogout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: httpguard.CookieName, Value: "", Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: -1})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}
