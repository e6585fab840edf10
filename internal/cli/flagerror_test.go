package cli

import (
	"slices"
	"testing"

	"github.com/spf13/pflag"
)

// TestNearestFlags: a mistyped flag name is taken for the flags at the
// least edit distance (at most two edits), else for the ones it begins;
// a name close to none, hidden and deprecated flags give nothing.
func TestNearestFlags(t *testing.T) {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	for _, n := range []string{"results", "room", "json", "home", "mode", "since", "until", "as-of", "secret"} {
		fs.String(n, "", "")
	}
	fs.String("old", "", "")
	if err := fs.MarkDeprecated("old", "gone"); err != nil {
		t.Fatal(err)
	}
	fs.String("internal", "", "")
	if err := fs.MarkHidden("internal"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		typed string
		want  []string
	}{
		{"reslts", []string{"results"}},
		{"resutls", []string{"results"}},
		{"RESULTS", []string{"results"}},
		{"res", []string{"results"}},
		{"jsn", []string{"json"}},
		{"hme", []string{"home"}},
		{"rom", []string{"room"}},
		{"mde", []string{"mode"}},
		{"hom", []string{"home"}},
		{"asof", []string{"as-of"}},
		{"zebra-quantum", nil},
		{"x", nil},
		{"ol", nil},
		{"internl", nil},
	} {
		if got := nearestFlags(fs, c.typed); !slices.Equal(got, c.want) {
			t.Errorf("nearestFlags(%q) = %q, want %q", c.typed, got, c.want)
		}
	}
}
