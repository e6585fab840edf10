package web

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/config"
)

func TestEditReflectorTable(t *testing.T) {
	set := []tomlSetting{{"recent_keep", "4"}, {"interval", `"1h"`}}
	cases := []struct {
		name, doc, want string
	}{
		{"empty file", "", "[reflector]\nrecent_keep = 4\ninterval = \"1h\"\n"},
		{"no table", "[search]\nresults = 3", "[search]\nresults = 3\n\n[reflector]\nrecent_keep = 4\ninterval = \"1h\"\n"},
		{"replace in place, keep comments",
			"# top\n[reflector] # the reflector\n# keep\nrecent_keep = 12   # newest\nenabled = true\n\n[search]\nresults = 3\n",
			"# top\n[reflector] # the reflector\n# keep\nrecent_keep = 4   # newest\nenabled = true\ninterval = \"1h\"\n\n[search]\nresults = 3\n"},
		{"string value with a hash", "[reflector]\ninterval = \"3#0m\" # c\n", "[reflector]\ninterval = \"1h\" # c\nrecent_keep = 4\n"},
		{"quoted header and key", "[ \"reflector\" ]\n\"recent_keep\" = 1\n", "[ \"reflector\" ]\n\"recent_keep\" = 4\ninterval = \"1h\"\n"},
		{"crlf", "[reflector]\r\nrecent_keep = 1\r\n[search]\r\nresults = 3\r\n", "[reflector]\r\nrecent_keep = 4\r\ninterval = \"1h\"\r\n[search]\r\nresults = 3\r\n"},
		{"header text in a multi-line string",
			"[summarizer]\ncommand = \"\"\"\n[reflector]\nrecent_keep = 1\n\"\"\"\n",
			"[summarizer]\ncommand = \"\"\"\n[reflector]\nrecent_keep = 1\n\"\"\"\n\n[reflector]\nrecent_keep = 4\ninterval = \"1h\"\n"},
		{"no final newline", "[reflector]\nrecent_keep = 1", "[reflector]\nrecent_keep = 4\ninterval = \"1h\"\n"},
		{"array table after", "[reflector]\nenabled = true\n[[hooks]]\nx = 1\n", "[reflector]\nenabled = true\nrecent_keep = 4\ninterval = \"1h\"\n[[hooks]]\nx = 1\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := editReflectorTable(c.doc, set); got != c.want {
				t.Errorf("got\n%q\nwant\n%q", got, c.want)
			}
		})
	}
}

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
			err := updateReflectorConfig(context.Background(), p, []tomlSetting{{"recent_keep", "4"}})
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
	if err := updateTableConfig(context.Background(), p, "manager", []tomlSetting{{"mining", "false"}}); err != nil {
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
	if err := updateTableConfig(context.Background(), p, "manager", []tomlSetting{{"mining", "true"}}); err != nil {
		t.Fatal(err)
	}
	if cfg, _ := config.Load(p); !cfg.Manager.Mining {
		t.Error("mining = true did not take")
	}
}
