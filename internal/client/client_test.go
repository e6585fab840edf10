package client_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/client"
	"github.com/hivemem/hivemem/internal/eventlog"
	"github.com/hivemem/hivemem/internal/hometest"
	"github.com/hivemem/hivemem/internal/manager"
	"github.com/hivemem/hivemem/internal/reflector"
	"github.com/hivemem/hivemem/internal/web"
	"github.com/hivemem/hivemem/internal/web/webtest"
	"github.com/hivemem/hivemem/internal/wiring"
)

// server opens a lexical home with one mined agent and serves its API.
func server(t *testing.T) (*app.App, *client.Client) {
	t.Helper()
	t.Setenv("HIVEMEM_EMBEDDER_PROVIDER", "none")
	ctx := context.Background()
	a, err := wiring.Open(ctx, wiring.Options{Home: filepath.Join(t.TempDir(), "home"), Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	path := hometest.WriteMemory(t, a.Home(), "alice", "# Memory — Alice (alice)\n\n## 2026-11-20 — fixed flaky login test\nThe login test was flaky.\n\n## 2026-11-21 — login rate limit\nRate limit on login.\n")
	if _, err := a.Mine(ctx, app.MineRequest{Path: path}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(web.New(web.Deps{App: a}))
	t.Cleanup(srv.Close)
	return a, client.New(srv.URL, "")
}

// searchBoth asks req of the client and of the app in process.
func searchBoth(t *testing.T, a *app.App, c *client.Client, req app.SearchRequest) (got, want app.SearchResult) {
	t.Helper()
	ctx := context.Background()
	got, err := c.Search(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if want, err = a.Search(ctx, req); err != nil {
		t.Fatal(err)
	}
	return got, want
}

// TestClientSearchAndWakeUpAreTheAppsAnswers: the typed client's search
// and wake-up over real HTTP decode into the app's own result, equal to
// asking the app in process (timings and dashboard links aside).
func TestClientSearchAndWakeUpAreTheAppsAnswers(t *testing.T) {
	a, c := server(t)
	ctx := context.Background()
	got, want := searchBoth(t, a, c, app.SearchRequest{Query: "login", Results: 2, Wing: "alice"})
	got.TookMS, want.TookMS = 0, 0
	for i := range got.Hits {
		if got.Hits[i].View == "" {
			t.Errorf("hit %d has no dashboard link", i)
		}
		got.Hits[i].View = ""
	}
	if len(got.Hits) != 2 || !reflect.DeepEqual(got, want) {
		t.Errorf("client search = %+v\nwant %+v", got, want)
	}
	d, err := c.WakeUp(ctx, app.WakeUpRequest{Wing: "alice", Budget: 300})
	if err != nil {
		t.Fatal(err)
	}
	wd, err := a.WakeUp(ctx, app.WakeUpRequest{Wing: "alice", Budget: 300})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d, wd) {
		t.Errorf("client wake-up = %+v\nwant %+v", d, wd)
	}
}

// TestClientSearchSendsIncludeSuperseded: a search with
// IncludeSuperseded finds, through the client, the section marked as
// replaced, as the app does.
func TestClientSearchSendsIncludeSuperseded(t *testing.T) {
	a, c := server(t)
	ctx := context.Background()
	path := hometest.WriteMemory(t, a.Home(), "bob", "# Memory — Bob (bob)\n\n## 2026-11-02 — deploy command\n> superseded by: 2026-12-01 — deploy command\nDeploy the shop with make deploy.\n\n## 2026-12-01 — deploy command\nDeploy the shop with make ship.\n")
	if _, err := a.Mine(ctx, app.MineRequest{Path: path}); err != nil {
		t.Fatal(err)
	}
	got, want := searchBoth(t, a, c, app.SearchRequest{Query: "deploy shop", Wing: "bob", IncludeSuperseded: true})
	if len(want.Hits) != 2 || len(got.Hits) != len(want.Hits) {
		t.Fatalf("client search with include_superseded = %d hits, the app's %d (want 2)", len(got.Hits), len(want.Hits))
	}
}

// TestClientReportsTheServersRefusal: a request the server refuses comes
// back as an *Error with its status and message.
func TestClientReportsTheServersRefusal(t *testing.T) {
	_, c := server(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		req    app.SearchRequest
		status int
	}{
		{"bad date", app.SearchRequest{Query: "login", Since: "2026-13-01"}, http.StatusBadRequest},
		{"bad as-of date", app.SearchRequest{Query: "login", AsOf: "2026-13-01"}, http.StatusBadRequest},
		{"unknown wing", app.SearchRequest{Query: "login", Wing: "nobody"}, http.StatusNotFound},
	} {
		_, err := c.Search(ctx, tc.req)
		var e *client.Error
		if !errors.As(err, &e) || e.Status != tc.status || e.Message == "" {
			t.Errorf("%s: %v, want a %d *client.Error with a message", tc.name, err, tc.status)
		}
	}
	if _, err := client.New("127.0.0.1:1", "").Manager(ctx); err == nil {
		t.Error("Manager of a closed port: no error")
	}
}

// TestClientSendsAGivenZero: a results or budget of 0 marked as given
// (ResultsGiven, BudgetGiven) reaches the server, which refuses it with
// the app's message, as the CLI and MCP do; unmarked, 0 is the default.
func TestClientSendsAGivenZero(t *testing.T) {
	a, c := server(t)
	ctx := context.Background()
	refused := func(name string, err, appErr error) {
		t.Helper()
		var e *client.Error
		if appErr == nil || !errors.As(err, &e) || e.Status != http.StatusBadRequest || !strings.Contains(appErr.Error(), e.Message) {
			t.Errorf("%s: client %v, app %v; want a 400 with the app's message", name, err, appErr)
		}
	}
	sr := app.SearchRequest{Query: "login", Results: 0, ResultsGiven: true}
	_, err := c.Search(ctx, sr)
	_, appErr := a.Search(ctx, sr)
	refused("results 0 given", err, appErr)
	wr := app.WakeUpRequest{Wing: "alice", Budget: 0, BudgetGiven: true}
	_, err = c.WakeUp(ctx, wr)
	_, appErr = a.WakeUp(ctx, wr)
	refused("budget 0 given", err, appErr)

	if res, err := c.Search(ctx, app.SearchRequest{Query: "login"}); err != nil || res.Results == 0 {
		t.Errorf("search with results unset: %+v, %v; want the default", res, err)
	}
	if _, err := c.WakeUp(ctx, app.WakeUpRequest{Wing: "alice"}); err != nil {
		t.Errorf("wake-up with budget unset: %v", err)
	}
}

// recorder serves h and keeps the method and path of every request.
type recorder struct {
	h    http.Handler
	mu   sync.Mutex
	seen []*http.Request
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc.mu.Lock()
	rc.seen = append(rc.seen, r.Clone(context.Background()))
	rc.mu.Unlock()
	rc.h.ServeHTTP(w, r)
}

// TestClientCoversEveryRoute: over real HTTP against the demo home, a
// client method for every route of web.APIRoutes answers what the server
// holds, and together the calls reach every route.
func TestClientCoversEveryRoute(t *testing.T) {
	ctx := context.Background()
	a, err := webtest.Open(ctx, filepath.Join(t.TempDir(), "home"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	m, err := manager.New(manager.Options{App: a, HTTP: manager.HTTPOff})
	if err != nil {
		t.Fatal(err)
	}
	h := web.New(web.Deps{App: a, ManagerStatus: m.Status, PollInterval: 20 * time.Millisecond})
	t.Cleanup(h.Close)
	rec := &recorder{h: h}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	c := client.New(srv.URL, "")
	check := func(what string, err error, ok bool, got any) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", what, err)
		} else if !ok {
			t.Errorf("%s = %+v", what, got)
		}
	}

	st, err := c.Status(ctx)
	check("Status", err, len(st.Agents) == len(webtest.Agents) && st.Manager != nil, st)
	ms, err := c.Manager(ctx)
	check("Manager", err, ms.Home == a.Home().Root && len(ms.Agents) == len(webtest.Agents), ms)
	as, err := c.Agents(ctx)
	check("Agents", err, len(as) == len(webtest.Agents) && as[0].Agent == webtest.Agents[0], as)
	one, err := c.Agent(ctx, "planner")
	check("Agent", err, one.Agent == "planner" && one.Bytes > 0, one)
	mv, err := c.Memory(ctx, "planner")
	check("Memory", err, mv.Agent == "planner" && len(mv.Sections) > 0, mv)
	raw, err := c.MemoryRaw(ctx, "planner")
	check("MemoryRaw", err, int64(len(raw)) == one.Bytes && sha256Hex(raw) == mv.SHA256, len(raw))
	sr, err := c.Search(ctx, app.SearchRequest{Query: "login", Results: 3})
	check("Search", err, len(sr.Hits) > 0, sr)
	d, err := c.WakeUp(ctx, app.WakeUpRequest{Wing: "planner"})
	check("WakeUp", err, d.Text != "", d)
	evs, err := c.Events(ctx, client.EventsRequest{N: 2, Kind: "restore"})
	check("Events", err, len(evs.Events) == 1 && evs.Events[0].Agent == "reviewer" && evs.Offset > 0, evs)

	stream, err := c.EventStream(ctx, evs.Offset, client.EventsRequest{Agent: "coder"})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	mr, err := c.Mine(ctx, app.MineRequest{Agent: "coder"})
	check("Mine", err, mr.Agent == "coder" && mr.Path != "", mr)
	if err := a.AppendEvent(eventlog.Event{Kind: "note", Agent: "coder"}); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		ev, err := stream.Next()
		got <- fmt.Sprint(ev.Kind, ev.Agent, err)
	}()
	select {
	case s := <-got:
		if s != "notecoder<nil>" && s != "minecoder<nil>" {
			t.Errorf("EventStream.Next = %s, want coder's mine or note event", s)
		}
	case <-time.After(10 * time.Second):
		t.Error("EventStream: no event within 10 s")
	}

	cr, err := c.Condense(ctx, "coder", app.CondenseRequest{DryRun: true, Force: true})
	check("Condense", err, cr.Status == reflector.StatusDryRun && cr.Diff != "", cr)
	bs, err := c.Backups(ctx, "")
	check("Backups", err, len(bs) > 0, bs)
	pb, err := c.Backups(ctx, "planner")
	check("Backups of planner", err, len(pb) == 1 && pb[0].Agent == "planner", pb)
	if len(pb) == 1 {
		bd, err := c.Backup(ctx, "planner", pb[0].Name, true)
		check("Backup", err, bd.Name == pb[0].Name && bd.Content != "" && bd.Diff != "", bd)
		rr, err := c.Restore(ctx, "planner", "latest")
		check("Restore", err, rr.Backup == pb[0].Name, rr)
	}
	set, err := c.Settings(ctx)
	check("Settings", err, set.Editable && set.Reflector.RecentKeep == 6, set)
	keep := 9
	up, err := c.UpdateSettings(ctx, app.SettingsRequest{Reflector: &app.ReflectorPatch{RecentKeep: &keep}})
	check("UpdateSettings", err, up.Reflector.RecentKeep == 9, up)

	rem, err := c.Remember(ctx, "coder", app.RememberRequest{Text: "Over the client: the cache key has the tenant.", Heading: "client note"})
	check("Remember", err, rem.Agent == "coder" && rem.Section.Heading != "" && rem.Duplicate == nil, rem)
	again, err := c.Remember(ctx, "coder", app.RememberRequest{Text: "over the client: the cache key has the tenant"})
	check("Remember a repeat", err, again.Duplicate != nil && again.Section.Heading == "", again)
	pin, err := c.Pin(ctx, "coder", app.PinRequest{Fact: "Client facts are pinned over HTTP"})
	check("Pin", err, pin.Added, pin)
	un, err := c.Unpin(ctx, "coder", app.UnpinRequest{Fact: "Client facts are pinned over HTTP"})
	check("Unpin", err, un.Fact == "Client facts are pinned over HTTP" && un.Archive != "", un)
	fg, err := c.Forget(ctx, "coder", app.ForgetRequest{Heading: "client note"})
	check("Forget", err, fg.Section != nil && fg.Kept != "", fg)
	_, err = c.Forget(ctx, "coder", app.ForgetRequest{Heading: "no such section"})
	check("Forget an unknown section", nil, err != nil && strings.Contains(err.Error(), "no section"), err)
	pg, err := c.Purge(ctx, app.PurgeRequest{Text: "the cache key has the tenant", DryRun: true})
	check("Purge dry run", err, pg.DryRun && pg.Places > 0, pg)
	_, err = c.Purge(ctx, app.PurgeRequest{Text: "short"})
	check("Purge a short text", nil, err != nil && strings.Contains(err.Error(), "too short"), err)

	// Every route was reached: route the recorded requests through a mux
	// holding the routes alone.
	mux := http.NewServeMux()
	for _, rt := range web.APIRoutes() {
		mux.HandleFunc(rt, func(http.ResponseWriter, *http.Request) {})
	}
	reached := map[string]bool{}
	rec.mu.Lock()
	for _, r := range rec.seen {
		if _, pattern := mux.Handler(r); pattern != "" {
			reached[pattern] = true
		}
	}
	rec.mu.Unlock()
	for _, rt := range web.APIRoutes() {
		if !reached[rt] {
			t.Errorf("no client call reached %s", rt)
		}
	}
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
