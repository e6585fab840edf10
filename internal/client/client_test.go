package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/client"
	"github.com/hivemem/hivemem/internal/manager"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/web"
)

// server opens a lexical home with one mined agent and serves its API.
func server(t *testing.T) (*app.App, *client.Client) {
	t.Helper()
	t.Setenv("HIVEMEM_EMBEDDER_PROVIDER", "none")
	ctx := context.Background()
	a, err := app.Open(ctx, app.Options{Home: filepath.Join(t.TempDir(), "home"), Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	path, _ := a.Home.MemoryPath("alice")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	text := "# Memory — Alice (alice)\n\n## 2026-11-20 — fixed flaky login test\nThe login test was flaky.\n\n## 2026-11-21 — login rate limit\nRate limit on login.\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Palace.Mine(ctx, path, palace.MineOptions{}); err != nil {
		t.Fatal(err)
	}
	m, err := manager.New(manager.Options{App: a, HTTP: manager.HTTPOff})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(web.New(web.Deps{App: a, Settings: m}))
	t.Cleanup(srv.Close)
	return a, client.New(srv.URL, "")
}

// TestClientSearchAndWakeUpAreTheAppsAnswers: the typed client's search
// and wake-up over real HTTP decode into the app's own result, equal to
// asking the app in process (timings and dashboard links aside).
func TestClientSearchAndWakeUpAreTheAppsAnswers(t *testing.T) {
	a, c := server(t)
	ctx := context.Background()
	req := app.SearchRequest{Query: "login", Results: 2, Wing: "alice"}
	got, err := c.Search(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	want, err := a.Search(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
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
