package archtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// module is the import path every package of the project starts with.
const module = "github.com/hivemem/hivemem/"

// frontEnds are the packages that face a user or an agent (with their
// subpackages): they are to speak only to app.
var frontEnds = []string{"internal/cli", "internal/web", "internal/mcpserver", "internal/manager"}

// domain are the packages below app (with their subpackages: every
// store/… backend): no front end is to import them. app, config, home,
// httpguard, eventlog, client and the utility packages are allowed.
var domain = []string{
	"internal/palace", "internal/reflector", "internal/capture", "internal/memfile", "internal/chunk",
	"internal/store", "internal/writelock", "internal/atomicio", "internal/summarize", "internal/minilm",
	"internal/purge", "internal/redact", "internal/dedup", "internal/memory",
}

// concrete are the stores and embedders app is to take as interfaces,
// chosen by a wiring package of their own.
var concrete = []string{
	"internal/store/sqlite", "internal/store/postgres", "internal/minilm", "internal/modelfetch", "internal/openaiembed",
}

// TestFrontEndsImportNoNewDomainPackage is the import rule of issue #30 as
// a ratchet: every import of a domain package by a non-test file of a
// front end is listed in testdata/frontend-domain-edges.txt, one
// "file -> package" a line. A new edge fails (speak to app instead); an
// edge that has gone fails too, until its line is deleted, so the list
// only shrinks. #30 drives it to empty; then the rule holds outright.
func TestFrontEndsImportNoNewDomainPackage(t *testing.T) {
	got := importEdges(t, listPackages(t), frontEnds, domain)
	checkRatchet(t, "testdata/frontend-domain-edges.txt", got, "a front end speaks to app, not below it")
}

// TestAppImportsNoConcreteStoreOrEmbedder: app takes stores and
// embedders as interfaces; choosing them is internal/wiring's job, the
// composition root, so app imports none of them.
func TestAppImportsNoConcreteStoreOrEmbedder(t *testing.T) {
	for _, e := range importEdges(t, listPackages(t), []string{"internal/app"}, concrete) {
		t.Errorf("import %s: app takes stores and embedders as interfaces; internal/wiring chooses them (issue #30)", e)
	}
}

// TestImportEdgesAreFoundInEveryFileOfAFrontEnd: the edge finder sees a
// domain import in a front end's file, its subpackages, and files built
// only on another platform, and ignores test files, allowed packages and
// packages that only share a prefix with a listed one.
func TestImportEdgesAreFoundInEveryFileOfAFrontEnd(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, src string) {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("cli/a.go", "package cli\nimport (\n\t\"fmt\"\n\t\""+module+"internal/palace\"\n\t\""+module+"internal/app\"\n)\n")
	write("cli/b_windows.go", "package cli\nimport _ \""+module+"internal/store/sqlite\"\n")
	write("cli/a_test.go", "package cli\nimport \""+module+"internal/memfile\"\n")
	write("cli/sub/c.go", "package sub\nimport \""+module+"internal/storeish\"\n")
	write("clix/d.go", "package clix\nimport \""+module+"internal/palace\"\n")
	pkgs := []goPackage{
		{ImportPath: module + "internal/cli", Dir: filepath.Join(dir, "cli"), GoFiles: []string{"a.go"},
			IgnoredGoFiles: []string{"b_windows.go"}, TestGoFiles: []string{"a_test.go"}},
		{ImportPath: module + "internal/cli/sub", Dir: filepath.Join(dir, "cli/sub"), GoFiles: []string{"c.go"}},
		{ImportPath: module + "internal/clix", Dir: filepath.Join(dir, "clix"), GoFiles: []string{"d.go"}},
	}
	got := importEdges(t, pkgs, []string{"internal/cli"}, []string{"internal/palace", "internal/store", "internal/memfile"})
	want := []string{"internal/cli/a.go -> internal/palace", "internal/cli/b_windows.go -> internal/store/sqlite"}
	if !slices.Equal(got, want) {
		t.Errorf("edges %q, want %q", got, want)
	}
}

// TestRatchetNamesNewAndGoneEdges: a listed edge that is found passes; a
// new one and a gone one are each named, and an unsorted list is refused.
func TestRatchetNamesNewAndGoneEdges(t *testing.T) {
	tests := []struct {
		name, list string
		got        []string
		want       []string // substrings of the failure, none: passes
	}{
		{"same", "a -> b\nc -> d\n", []string{"a -> b", "c -> d"}, nil},
		{"new", "a -> b\n", []string{"a -> b", "c -> d"}, []string{"new import c -> d: the rule"}},
		{"gone", "# a comment\na -> b\nc -> d\n", []string{"c -> d"}, []string{"a -> b has gone", "delete its line"}},
		{"unsorted", "c -> d\na -> b\n", []string{"a -> b", "c -> d"}, []string{"not sorted"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			problems := compareRatchet("list.txt", tt.list, tt.got, "the rule")
			if len(tt.want) == 0 && len(problems) > 0 {
				t.Fatalf("problems %q, want none", problems)
			}
			all := strings.Join(problems, "\n")
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("problems %q do not say %q", problems, w)
				}
			}
		})
	}
}

// goPackage is the part of `go list -json` the rule reads.
type goPackage struct {
	ImportPath     string
	Dir            string
	GoFiles        []string
	CgoFiles       []string
	IgnoredGoFiles []string // files of other platforms too, so the list is the same everywhere
	TestGoFiles    []string
}

// listPackages lists the project's packages with `go list`.
func listPackages(t *testing.T) []goPackage {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "go", "list", "-e", "-json=ImportPath,Dir,GoFiles,CgoFiles,IgnoredGoFiles", module+"...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []goPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p goPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		t.Fatal("go list found no packages")
	}
	return pkgs
}

// within reports whether path (module-relative) is one of roots or below
// one of them.
func within(path string, roots []string) bool {
	for _, r := range roots {
		if path == r || strings.HasPrefix(path, r+"/") {
			return true
		}
	}
	return false
}

// importEdges is every "file -> package" import, sorted, by a non-test
// file of a package in from (or below) of a package in to (or below);
// both are module-relative.
func importEdges(t *testing.T, pkgs []goPackage, from, to []string) []string {
	t.Helper()
	var edges []string
	fset := token.NewFileSet()
	for _, p := range pkgs {
		rel, ok := strings.CutPrefix(p.ImportPath, module)
		if !ok || !within(rel, from) {
			continue
		}
		files := slices.Concat(p.GoFiles, p.CgoFiles, p.IgnoredGoFiles)
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") || !strings.HasSuffix(name, ".go") {
				continue
			}
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.ImportsOnly)
			if err != nil {
				t.Fatalf("parse %s: %v", filepath.Join(p.Dir, name), err)
			}
			for _, imp := range f.Imports {
				path, err := strconv.Unquote(imp.Path.Value)
				if err != nil {
					t.Fatalf("%s: import %s: %v", name, imp.Path.Value, err)
				}
				if target, ok := strings.CutPrefix(path, module); ok && within(target, to) {
					edges = append(edges, rel+"/"+name+" -> "+target)
				}
			}
		}
	}
	slices.Sort(edges)
	return slices.Compact(edges)
}

// checkRatchet fails t unless the edges got are exactly those listed in
// the file at path.
func checkRatchet(t *testing.T, path string, got []string, rule string) {
	t.Helper()
	list, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range compareRatchet(path, string(list), got, rule) {
		t.Error(p)
	}
}

// compareRatchet says how the edges got differ from those listed in list
// (one a line, sorted; blank lines and lines starting with # ignored),
// read from the file named path; a new edge breaks rule.
func compareRatchet(path, list string, got []string, rule string) []string {
	var listed []string
	sc := bufio.NewScanner(strings.NewReader(list))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		listed = append(listed, line)
	}
	var problems []string
	if !slices.IsSorted(listed) || len(slices.Compact(slices.Clone(listed))) != len(listed) {
		problems = append(problems, fmt.Sprintf("%s is not sorted or has a line twice: keep it `sort -u`", path))
	}
	for _, e := range got {
		if !slices.Contains(listed, e) {
			problems = append(problems, fmt.Sprintf("new import %s: %s (issue #30); do not add it to %s", e, rule, path))
		}
	}
	for _, e := range listed {
		if !slices.Contains(got, e) {
			problems = append(problems, fmt.Sprintf("import %s has gone: delete its line from %s, so the list only shrinks", e, path))
		}
	}
	return problems
}
