package app

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// TestUpdateSettingsRefusesLayouts: a config.toml the line editor cannot
// change safely is refused as a conflict that names the file, and is left
// as it is.
func TestUpdateSettingsRefusesLayouts(t *testing.T) {
	cases := map[string]string{
		"dotted keys":     "reflector.recent_keep = 3\n",
		"inline table":    "reflector = { recent_keep = 3 }\n",
		"does not parse":  "[reflector\n",
		"invalid result":  "[reflector]\nbyte_trigger_pct = 0\n", // Validate fails on a key not being set
		"unknown section": "[nonsense]\nx = 1\n",
	}
	a := openLexical(t)
	p, keep := a.home.ConfigPath(), 4
	for name, doc := range cases {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := a.UpdateSettings(t.Context(), SettingsRequest{Reflector: &ReflectorPatch{RecentKeep: &keep}})
			if !errors.Is(err, ErrConflict) {
				t.Fatalf("err = %v, want a conflict", err)
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
// in config.toml's [manager] table; the rest of the file is kept, and an
// App without a live configuration (no manager) loads the saved file.
func TestMiningSwitchSaved(t *testing.T) {
	a := openLexical(t)
	p := a.home.ConfigPath()
	doc := "[manager]\nhttp = \"127.0.0.1:7777\" # loopback\n\n[reflector]\nrecent_keep = 3\n"
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	off, on := false, true
	res, err := a.UpdateSettings(t.Context(), SettingsRequest{Manager: &ManagerPatch{Mining: &off}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	want := "[manager]\nhttp = \"127.0.0.1:7777\" # loopback\nmining = false\n\n[reflector]\nrecent_keep = 3\n"
	if string(got) != want {
		t.Errorf("config.toml =\n%s\nwant\n%s", got, want)
	}
	if cfg := a.Settings(); res.Manager.Mining || cfg.Manager.Mining || cfg.Reflector.RecentKeep != 3 || res.Reflector.RecentKeep != 3 {
		t.Errorf("settings after mining off: result %+v, live %+v", res, cfg.Manager)
	}
	if res, err := a.UpdateSettings(t.Context(), SettingsRequest{Manager: &ManagerPatch{Mining: &on}}); err != nil || !res.Manager.Mining || !a.Settings().Manager.Mining {
		t.Errorf("mining = true did not take: %v %+v", err, res.Manager)
	}
}

// TestSettingsRequestRefusesBadInput: empty requests and values out of
// range are bad input, and write nothing.
func TestSettingsRequestRefusesBadInput(t *testing.T) {
	a := openLexical(t)
	before, _ := os.ReadFile(a.home.ConfigPath())
	zero, huge, iv := 0, 1<<40, "1ms"
	for name, r := range map[string]SettingsRequest{
		"empty":            {},
		"empty reflector":  {Reflector: &ReflectorPatch{}},
		"manager no keys":  {Manager: &ManagerPatch{}},
		"recent_keep zero": {Reflector: &ReflectorPatch{RecentKeep: &zero}},
		"retention huge":   {Reflector: &ReflectorPatch{Retention: &huge}},
		"interval short":   {Reflector: &ReflectorPatch{Interval: &iv}},
	} {
		t.Run(name, func(t *testing.T) {
			if err := r.Validate(); !errors.Is(err, ErrInvalid) {
				t.Errorf("Validate = %v, want bad input", err)
			}
			if _, err := a.UpdateSettings(t.Context(), r); !errors.Is(err, ErrInvalid) {
				t.Errorf("UpdateSettings = %v, want bad input", err)
			}
			if now, _ := os.ReadFile(a.home.ConfigPath()); string(now) != string(before) {
				t.Errorf("config.toml changed to %q", now)
			}
		})
	}
}
