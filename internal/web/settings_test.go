package web

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/config"
	"github.com/hivemem/hivemem/internal/manager"
	"github.com/hivemem/hivemem/internal/tomledit"
	"github.com/hivemem/hivemem/internal/web/webtest"
)

func TestUpdateReflectorConfigRefuses(t *testing.T) {
	cases := map[string]string{
		"dotted keys":     "reflector.recent_keep = 3\n",
		"inline table":    "reflector = { recent_keep = 3 }\n",
		"does not parse":  "[reflector\n",
		"invalid result":  "[reflector]\nbyte_trigger_pct = 0\n", // Validate fails on a key not being set
		"unknown section": "[nonsense]\nx = 1\n",
	}
	for name, doc := range cases {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "config.toml")
			if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			err := updateReflectorConfig(context.Background(), p, []tomledit.Setting{{Key: "recent_keep", Value: "4"}})
			if err == nil || statusOf(err) != 409 {
				t.Fatalf("err = %v (status %d), want a 409", err, statusOf(err))
			}
			if got, _ := os.ReadFile(p); string(got) != doc {
				t.Errorf("file changed to %q", got)
			}
			if !strings.Contains(err.Error(), "config.toml") {
				t.Errorf("error does not name the file: %v", err)
			}
		})
	}
}

// TestMiningSwitchSaved: the dashboard's memory switch is manager.mining
// in config.toml's [manager] table; the rest of the file is kept.
func TestMiningSwitchSaved(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config.toml")
	doc := "[manager]\nhttp = \"127.0.0.1:7777\" # loopback\n\n[reflector]\nrecent_keep = 3\n"
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := updateTableConfig(context.Background(), p, "manager", []tomledit.Setting{{Key: "mining", Value: "false"}}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	want := "[manager]\nhttp = \"127.0.0.1:7777\" # loopback\nmining = false\n\n[reflector]\nrecent_keep = 3\n"
	if string(got) != want {
		t.Errorf("config.toml =\n%s\nwant\n%s", got, want)
	}
	cfg, err := config.Load(p)
	if err != nil || cfg.Manager.Mining || cfg.Reflector.RecentKeep != 3 {
		t.Errorf("loaded %+v, %v", cfg.Manager, err)
	}
	if err := updateTableConfig(context.Background(), p, "manager", []tomledit.Setting{{Key: "mining", Value: "true"}}); err != nil {
		t.Fatal(err)
	}
	if cfg, _ := config.Load(p); !cfg.Manager.Mining {
		t.Error("mining = true did not take")
	}
}

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
	h := New(Deps{App: a, Settings: m})
	t.Cleanup(h.Close)
	want := m.Config().Reflector.RecentKeep
	if err := os.WriteFile(a.Home.ConfigPath(), []byte("[reflector\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if m.ReloadConfig() == nil { // what the manager's watcher does
		t.Fatal("a broken config.toml reloaded")
	}
	s := h.settings()
	if !strings.Contains(s.ConfigError, "config") || s.Reflector.RecentKeep != want {
		t.Errorf("settings = error %q, recent_keep %d; want an error and %d", s.ConfigError, s.Reflector.RecentKeep, want)
	}
}
