package cli

import (
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/chunk"
	"github.com/hivemem/hivemem/internal/hometest"
)

// TestBoolFlagsShowNoValueInHelp: a switch is listed in --help without a
// value name. pflag takes the first `quoted` words of a usage string as
// the flag's value name, so backquotes in a bool flag's usage would show
// it as taking a value ("--as-sessions bench longmemeval").
func TestBoolFlagsShowNoValueInHelp(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if name, _ := pflag.UnquoteUsage(f); f.Value.Type() == "bool" && name != "" {
				t.Errorf("%s --%s: help shows it taking %q (backquotes in its usage)", c.CommandPath(), f.Name, name)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCommand(&globals{}))
	walk(newMempalaceCommand(&globals{}))
}

// TestFlagHelpShowsItsDefaultOnce: a flag whose default pflag prints
// ("(default \"auto\")") does not name a default in its usage too, which
// --help would show as two defaults.
func TestFlagHelpShowsItsDefaultOnce(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			one := pflag.NewFlagSet("", pflag.ContinueOnError)
			one.AddFlag(f)
			if line := one.FlagUsages(); strings.Count(line, "(default") > 1 {
				t.Errorf("%s --%s: help names the default twice: %s", c.CommandPath(), f.Name, strings.TrimSpace(line))
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCommand(&globals{}))
	walk(newMempalaceCommand(&globals{}))
}

// TestSearchRoomHelpNamesEveryRoom: `search --room`'s help lists every
// room the miner gives a drawer, so none is found only by reading code.
func TestSearchRoomHelpNamesEveryRoom(t *testing.T) {
	cmd, _, err := newRootCommand(&globals{}).Find([]string{"search"})
	if err != nil {
		t.Fatal(err)
	}
	usage := cmd.Flags().Lookup("room").Usage
	for _, room := range []string{chunk.RoomHeader, chunk.RoomPinned, chunk.RoomCondensed, chunk.RoomRecent, chunk.RoomArchive, chunk.RoomSession} {
		if !strings.Contains(usage, room) {
			t.Errorf("search --room help %q does not name room %q", usage, room)
		}
	}
}

// TestACommandReadsItsConfigOnce: the app a command opens is built from
// the config the command loaded first (homeConfig), not from
// config.toml read again, so a command sees one configuration.
func TestACommandReadsItsConfigOnce(t *testing.T) {
	h := hometest.NewWith(t, "[embedder]\nprovider = \"none\"\n", nil)
	g := &globals{home: h.Root}
	if _, cfg, err := g.homeConfig(); err != nil || cfg.Embedder.Provider != "none" {
		t.Fatalf("homeConfig: provider %q, %v", cfg.Embedder.Provider, err)
	}
	// Read again, this config would fail the open (an unreachable endpoint).
	again := "[embedder]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:1/v1\"\nmodel = \"m\"\n"
	if err := os.WriteFile(h.ConfigPath(), []byte(again), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := g.open(t.Context(), false)
	if err != nil {
		t.Fatalf("open read config.toml again: %v", err)
	}
	defer a.Close()
	if st, err := a.Status(t.Context(), app.StatusRequest{}); err != nil || st.Embedder.Provider != "none" {
		t.Fatalf("status embedder %+v, %v: want the config loaded first (none)", st.Embedder, err)
	}
}
