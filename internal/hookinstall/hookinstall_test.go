package hookinstall

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/filetest"
)

// TestInstallTwiceThenUninstallKeepsOtherHooks: an install says which
// events it changed and where it backed the file up, a second install
// changes nothing, and an uninstall leaves only the hooks that were not
// hivemem's.
func TestInstallTwiceThenUninstallKeepsOtherHooks(t *testing.T) {
	const foreign = `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}}`
	for _, tc := range []struct {
		target Target
		file   string
		events []string
	}{
		{ClaudeCode, ".claude/settings.json", []string{"SessionStart", "PreCompact", "SessionEnd"}},
		{Codex, ".codex/hooks.json", []string{"SessionStart", "PreCompact", "Stop"}},
	} {
		t.Run(string(tc.target), func(t *testing.T) {
			ctx := context.Background()
			project := t.TempDir()
			path := filepath.Join(project, tc.file)
			filetest.Write(t, path, foreign)
			o := Options{Project: project, Agent: "coder", Command: "/opt/bin/hivemem", Home: "hive"}

			res, err := Install(ctx, tc.target, o)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Changed || res.Path != path || !slices.Equal(res.Events, tc.events) || res.Backup == "" {
				t.Fatalf("first install = %+v; want changed %s, events %v, a backup", res, path, tc.events)
			}
			if b, err := os.ReadFile(res.Backup); err != nil || string(b) != foreign {
				t.Errorf("backup %s = %q, %v; want the file as it was", res.Backup, b, err)
			}
			data, _ := os.ReadFile(path)
			home, _ := filepath.Abs("hive")
			if want := "/opt/bin/hivemem hook session-start --agent coder --home " + home; !strings.Contains(string(data), want) {
				t.Errorf("settings lack %q:\n%s", want, data)
			}

			if res, err := Install(ctx, tc.target, o); err != nil || res.Changed || res.Events != nil || res.Backup != "" {
				t.Errorf("second install = %+v, %v; want nothing changed", res, err)
			}

			res, err = Uninstall(ctx, tc.target, Options{Project: project})
			if err != nil || !res.Changed || res.Backup == "" {
				t.Fatalf("uninstall = %+v, %v; want changed, with a backup", res, err)
			}
			data, _ = os.ReadFile(path)
			if s := string(data); strings.Contains(s, "hivemem") || !strings.Contains(s, "notify-send done") {
				t.Errorf("after uninstall the settings are:\n%s", s)
			}
		})
	}
}

func TestInstallRejectsBadTargetsAndOptions(t *testing.T) {
	project := t.TempDir()
	for _, tc := range []struct {
		name   string
		target Target
		o      Options
		want   string
	}{
		{"unknown target", "vim", Options{Project: project}, `unknown agent program "vim"`},
		{"missing project", ClaudeCode, Options{Project: filepath.Join(project, "nope")}, "does not exist"},
		{"bad agent id", ClaudeCode, Options{Project: project, Agent: "../x", Command: "hivemem"}, `contains ".."`},
		{"foreign binary", Codex, Options{Project: project, Command: "/usr/bin/hm"}, `must contain "hivemem"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Install(context.Background(), tc.target, tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Install = %v; want an error with %q", err, tc.want)
			}
			if entries, _ := os.ReadDir(project); len(entries) != 0 {
				t.Errorf("a rejected install left %d entries in the project", len(entries))
			}
		})
	}
}
