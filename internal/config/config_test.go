package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/filetest"
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
		{"negative query cache", "[search]\nquery_cache = -1\n", "", "", "search.query_cache"},
		{"ef_search too big", "[palace]\nhnsw_ef_search = 5000\n", "", "", "palace.hnsw_ef_search"},
		{"candidate pool too big", "[search]\ncandidate_pool = 10000000\n", "", "", "search.candidate_pool"},
		{"negative candidate pool", "[search]\ncandidate_pool = -5\n", "", "", "search.candidate_pool"},
		{"negative wake-up budget", "[search]\nwake_up_budget = -5\n", "", "", "search.wake_up_budget"},
		{"tiny session cap", "[capture]\nsession_max_bytes = 10\n", "", "", "capture.session_max_bytes"},
		{"negative session retention", "", "HIVEMEM_CAPTURE_RETENTION_DAYS", "-1", "capture.retention_days"},
		{"token with surrounding spaces", "[manager]\ntoken = \" padded \"\n", "", "", "manager.token"},
		{"env token with a newline", "", "HIVEMEM_MANAGER_TOKEN", "tok\n", "manager.token"},
		{"token with a control character", "[manager]\ntoken = \"a\\u0000b\"\n", "", "", "manager.token"},
		{"token too short", "[manager]\ntoken = \"x\"\n", "", "", "manager.token (or HIVEMEM_MANAGER_TOKEN) is too short (1 bytes): at least 16"},
		{"env token too short", "", "HIVEMEM_MANAGER_TOKEN", "fifteen-bytes!!", "at least 16"},
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
			if strings.Contains(err.Error(), "padded") || strings.Contains(err.Error(), "tok\n") {
				t.Fatalf("the error shows the token: %v", err)
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

// TestBackendEnv covers the short names HIVEMEM_BACKEND and HIVEMEM_DSN,
// and that the long names win over them.
func TestBackendEnv(t *testing.T) {
	tests := []struct {
		name        string
		env         map[string]string
		backend     string
		dsn         string
		wantErrPart string
	}{
		{"default", nil, "sqlite", "", ""},
		{"short names", map[string]string{"HIVEMEM_BACKEND": "postgres", "HIVEMEM_DSN": "postgres://h/db"}, "postgres", "postgres://h/db", ""},
		{"long names", map[string]string{"HIVEMEM_PALACE_BACKEND": "postgres", "HIVEMEM_PALACE_DSN": "host=h"}, "postgres", "host=h", ""},
		{"long wins", map[string]string{"HIVEMEM_BACKEND": "postgres", "HIVEMEM_PALACE_BACKEND": "sqlite"}, "sqlite", "", ""},
		{"postgres without dsn", map[string]string{"HIVEMEM_BACKEND": "postgres"}, "", "", "palace.dsn is empty"},
		{"bad vector mode", map[string]string{"HIVEMEM_PALACE_VECTOR_MODE": "hnsw"}, "", "", "vector_mode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{"HIVEMEM_BACKEND", "HIVEMEM_DSN", "HIVEMEM_PALACE_BACKEND", "HIVEMEM_PALACE_DSN", "HIVEMEM_PALACE_VECTOR_MODE"} {
				if v, ok := tt.env[k]; ok {
					t.Setenv(k, v)
				} else {
					t.Setenv(k, "")
					os.Unsetenv(k)
				}
			}
			cfg, err := Load(filepath.Join(t.TempDir(), "config.toml"))
			if tt.wantErrPart != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErrPart) {
					t.Fatalf("Load = %v, want an error about %q", err, tt.wantErrPart)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Palace.Backend != tt.backend || cfg.Palace.DSN != tt.dsn {
				t.Errorf("backend %q dsn %q, want %q %q", cfg.Palace.Backend, cfg.Palace.DSN, tt.backend, tt.dsn)
			}
		})
	}
}

// TestParse: the text of a config.toml alone, over the defaults, with the
// checks Load makes (unknown keys, Validate) and no environment.
func TestParse(t *testing.T) {
	t.Setenv("HIVEMEM_REFLECTOR_RECENT_KEEP", "99")
	cases := []struct {
		name, doc, wantErr string
		recentKeep         int
	}{
		{"empty is the defaults", "", "", Default().Reflector.RecentKeep},
		{"a value", "[reflector]\nrecent_keep = 4\n", "", 4},
		{"unknown key", "[reflector]\nrecent_kept = 4\n", `unknown key "reflector.recent_kept"; did you mean reflector.recent_keep?`, 0},
		{"invalid value", "[reflector]\nbyte_trigger_pct = 0\n", "byte_trigger_pct", 0},
		{"not TOML", "[reflector\n", "toml", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Parse([]byte(c.doc))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want one with %q", err, c.wantErr)
				}
				return
			}
			if err != nil || cfg.Reflector.RecentKeep != c.recentKeep {
				t.Fatalf("Parse = recent_keep %d, %v; want %d", cfg.Reflector.RecentKeep, err, c.recentKeep)
			}
		})
	}
}

// TestRedactSettings: redaction is on by default; its lists load from the
// file and from the environment (items separated by blanks); a rule or
// allow pattern that does not compile is an error naming its key.
func TestRedactSettings(t *testing.T) {
	if !Default().Redact.Enabled {
		t.Fatal("redact.enabled is off by default")
	}
	cfg, err := Load(filetest.Temp(t, "config.toml", "[redact]\nenabled = false\nallow = [\"sk_test_fixture\"]\nrules = [\"acme-token=acme_[a-z0-9]{16}\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Redact.Enabled || len(cfg.Redact.Allow) != 1 || len(cfg.Redact.Rules) != 1 {
		t.Errorf("from the file: %+v", cfg.Redact)
	}
	t.Setenv("HIVEMEM_REDACT_ALLOW_PATTERNS", `^AKIA.*FAKE$ ^ghp_0+$`)
	t.Setenv("HIVEMEM_REDACT_ENABLED", "true")
	cfg, err = Load(filetest.Temp(t, "config.toml", ""))
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Redact.Enabled || len(cfg.Redact.AllowPatterns) != 2 || cfg.Redact.AllowPatterns[1] != `^ghp_0+$` {
		t.Errorf("from the environment: %+v", cfg.Redact)
	}
	os.Unsetenv("HIVEMEM_REDACT_ALLOW_PATTERNS") // t.Setenv restores it
	for file, key := range map[string]string{
		"[redact]\nrules = [\"acme-token=(\"]\n":   "redact.rules",
		"[redact]\nrules = [\"no equals sign\"]\n": "redact.rules",
		"[redact]\nallow_patterns = [\"(\"]\n":     "redact.allow_patterns",
	} {
		if err := loadFile(t, file); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%q: %v, want an error naming %s", file, err, key)
		}
	}
}
