package cli

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestCLIReferenceIsUpToDate: docs/cli is what the command definitions
// generate, page for page; a command, flag or help text changed without
// regenerating the reference fails here.
func TestCLIReferenceIsUpToDate(t *testing.T) {
	const committed = "../../docs/cli"
	fresh := t.TempDir()
	if err := WriteReference(fresh); err != nil {
		t.Fatal(err)
	}
	want, err := filepath.Glob(filepath.Join(fresh, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	have, err := filepath.Glob(filepath.Join(committed, "hivemem*.md"))
	if err != nil {
		t.Fatal(err)
	}
	names := func(ps []string) []string {
		out := make([]string, len(ps))
		for i, p := range ps {
			out[i] = filepath.Base(p)
		}
		return out
	}
	const fix = "regenerate it: go generate ./internal/cli"
	if w, h := names(want), names(have); !slices.Equal(w, h) {
		t.Fatalf("docs/cli has pages %v, the commands make %v: %s", h, w, fix)
	}
	for _, p := range want {
		got, err := os.ReadFile(filepath.Join(committed, filepath.Base(p)))
		if err != nil {
			t.Fatal(err)
		}
		exp, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(exp) {
			t.Errorf("docs/cli/%s is out of date: %s", filepath.Base(p), fix)
		}
	}
}
