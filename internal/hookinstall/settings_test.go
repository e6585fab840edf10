package hookinstall

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSettingsBackupsNeverOverwriteEachOther: two writes within one
// second keep both earlier versions.
func TestSettingsBackupsNeverOverwriteEachOther(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	versions := []string{`{"v": 1}`, `{"v": 2}`}
	var backups []string
	for _, old := range versions {
		b, err := writeSettings(path, []byte(old), map[string]any{"v": 3})
		if err != nil {
			t.Fatal(err)
		}
		backups = append(backups, b)
	}
	if backups[0] == backups[1] {
		t.Fatalf("both backups are %s", backups[0])
	}
	for i, b := range backups {
		data, err := os.ReadFile(b)
		if err != nil || string(data) != versions[i] {
			t.Errorf("backup %s = %q, %v; want %q", b, data, err, versions[i])
		}
	}
}

func TestIsHivememHook(t *testing.T) {
	for cmd, want := range map[string]bool{
		"hivemem hook save --agent a":                    true,
		"/usr/local/bin/hivemem hook session-start":      true,
		ShellQuote("/opt/my bin/hivemem") + " hook save": true,
		ShellQuote("/opt/it's/hivemem") + " hook save":   true,
		`"/opt/x y/hivemem" hook session-start`:          true,
		"echo hook save":                                 false,
		"/usr/bin/hm hook save":                          false,
		"hivemem hooks install claude-code":              false,
		"hivemem hook":                                   false,
		"hivemem remember a 'hook save'":                 false,
		"notify-send 'hivemem hook save'":                false,
		"":                                               false,
	} {
		if got := isHivememHook(cmd); got != want {
			t.Errorf("isHivememHook(%q) = %v, want %v", cmd, got, want)
		}
	}
}
