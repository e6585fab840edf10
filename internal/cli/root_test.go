package cli

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hivemem/hivemem/internal/chunk"
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
