package web

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/manager"
	"github.com/hivemem/hivemem/internal/web/webtest"
)

// TestSettingsShowConfigError: when config.toml stops loading, the
// settings say so (config_error) and show the last good values.
func TestSettingsShowConfigError(t *testing.T) {
	a, err := webtest.Open(context.Background(), filepath.Join(t.TempDir(), "home"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	m, err := manager.New(manager.Options{App: a, HTTP: "off"})
	if err != nil {
		t.Fatal(err)
	}
	h := New(Deps{App: a})
	t.Cleanup(h.Close)
	want := m.Config().Reflector.RecentKeep
	if err := os.WriteFile(a.Home().ConfigPath(), []byte("[reflector\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if m.ReloadConfig() == nil { // what the manager's watcher does
		t.Fatal("a broken config.toml reloaded")
	}
	s := h.app.ReadSettings()
	if !strings.Contains(s.ConfigError, "config") || s.Reflector.RecentKeep != want {
		t.Errorf("settings = error %q, recent_keep %d; want an error and %d", s.ConfigError, s.Reflector.RecentKeep, want)
	}
}
