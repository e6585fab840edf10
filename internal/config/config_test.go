package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLoadLayers(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(path, []byte("[reflector]\nmin_bytes = 1000\ninterval = \"5m\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HIVEMEM_REFLECTOR_RECENT_KEEP", "3")
	t.Setenv("HIVEMEM_REFLECTOR_ENABLED", "false")
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Reflector.MinBytes != 1000 || cfg.Reflector.Interval.Duration != 5*time.Minute {
		t.Errorf("file not applied: %+v", cfg.Reflector)
	}
	if cfg.Reflector.RecentKeep != 3 || cfg.Reflector.Enabled {
		t.Errorf("env not applied: %+v", cfg.Reflector)
	}
	if cfg.Reflector.BudgetBytes != 128<<10 || cfg.Search.WakeUpBudget != 800 {
		t.Errorf("defaults lost: %+v", cfg)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, file, env, val, want string
	}{
		{"unknown key", "[reflector]\nmin_byte = 1\n", "", "", "unknown key"},
		{"bad toml", "[reflector\n", "", "", "parse config"},
		{"bad env int", "", "HIVEMEM_REFLECTOR_MIN_BYTES", "lots", "HIVEMEM_REFLECTOR_MIN_BYTES"},
		{"bad env duration", "", "HIVEMEM_REFLECTOR_INTERVAL", "soon", "HIVEMEM_REFLECTOR_INTERVAL"},
		{"bad backend", "[palace]\nbackend = \"mysql\"\n", "", "", "palace.backend"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".toml")
			if err := os.WriteFile(path, []byte(c.file), 0o644); err != nil {
				t.Fatal(err)
			}
			if c.env != "" {
				t.Setenv(c.env, c.val)
			}
			_, err := Load(path)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Load = %v, want error containing %q", err, c.want)
			}
		})
	}
}

func TestMissingFileIsDefaults(t *testing.T) {
	cfg, err := Load(filepath.Join(t.TempDir(), "nope.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Palace.Backend != "sqlite" || cfg.Manager.HTTP != "127.0.0.1:7777" {
		t.Fatalf("defaults: %+v", cfg)
	}
	if keys := EnvKeys(); len(keys) < 20 || keys[0] != "HIVEMEM_PALACE_BACKEND" {
		t.Fatalf("EnvKeys = %v", keys)
	}
}
