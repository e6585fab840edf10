package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// apiAllowed are the project's packages whose types app's exported API may
// mention besides its own: leaf packages every front end may import too.
// The standard library is allowed; every other package (the domain below
// app, a third party's) is not: app speaks in its own types.
var apiAllowed = []string{"internal/app", "internal/config", "internal/home", "internal/httpguard", "internal/eventlog"}

// apiSkipped are exported members of app's types the rule passes over.
//
// Index (a whole type) is not a request or a result but the port app consumes: the
// composition root (internal/wiring) hands app the concrete store and
// embedder through it, and a front end never holds one.
var apiSkipped = []string{"Index"}

// TestAppAPIMentionsNoNewDomainType is issue #30's "app speaks its own
// types" as a ratchet: every place app's exported API (exported functions,
// variables and types, their exported fields and methods, and every app
// type they lead to) mentions a type of a package outside apiAllowed is
// listed in testdata/app-api-domain-types.txt, one "member -> package" a
// line. A new one fails (define the request or result in app, and convert
// the domain's value into it inside app); one that has gone fails until
// its line is deleted, so the list only shrinks.
func TestAppAPIMentionsNoNewDomainType(t *testing.T) {
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes, Context: t.Context()}
	pkgs, err := packages.Load(cfg, module+"internal/app")
	if err != nil {
		t.Fatalf("load app: %v", err)
	}
	if len(pkgs) != 1 || len(pkgs[0].Errors) > 0 || pkgs[0].Types == nil {
		for _, p := range pkgs {
			for _, e := range p.Errors {
				t.Error(e)
			}
		}
		t.Fatalf("load app: %d packages", len(pkgs))
	}
	got := apiDomainMentions(pkgs[0].Types, apiSkipped)
	checkRatchet(t, "testdata/app-api-domain-types.txt", got, "app's API speaks in app's own types")
}

// TestAppHasNoExportedFields is issue #30's "App is closed": App's parts
// (the store, the palace, the reflector, the lock, the event log, the
// config) are its own, so that a front end calls an App operation and
// nothing below it; the few plain values a front end needs are methods
// (Home, Logger, EmbedderInfo, Settings).
func TestAppHasNoExportedFields(t *testing.T) {
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes, Context: t.Context()}
	pkgs, err := packages.Load(cfg, module+"internal/app")
	if err != nil {
		t.Fatalf("load app: %v", err)
	}
	if len(pkgs) != 1 || len(pkgs[0].Errors) > 0 || pkgs[0].Types == nil {
		t.Fatalf("load app: %d packages, errors %v", len(pkgs), pkgs[0].Errors)
	}
	got, err := exportedFields(pkgs[0].Types, "App")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range got {
		t.Errorf("app.App exports its field %s: unexport it, and give front ends an App operation instead (issue #30)", f)
	}
}

// TestExportedFieldsAreFoundEmbeddedOrNamed: the field finder reports a
// struct's exported fields, named or embedded (an exported embedded type
// is an exported field), and none of its unexported ones.
func TestExportedFieldsAreFoundEmbeddedOrNamed(t *testing.T) {
	pkg := checkSources(t, map[string]string{"internal/app": `package app
type Part struct{}
type part struct{}
type App struct {
	Part
	part
	Store int
	store int
	*Other
}
type Other struct{}
type Closed struct{ a, b int }
`}, "internal/app")
	for _, tc := range []struct {
		typ  string
		want []string
	}{
		{"App", []string{"Part", "Store", "Other"}},
		{"Closed", nil},
	} {
		got, err := exportedFields(pkg, tc.typ)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("exportedFields(%s) = %q, %v; want %q", tc.typ, got, err, tc.want)
		}
	}
	if _, err := exportedFields(pkg, "Missing"); err == nil {
		t.Error("exportedFields of a missing type: no error")
	}
}

// exportedFields names the exported fields of the struct type name of
// pkg, in order.
func exportedFields(pkg *types.Package, name string) ([]string, error) {
	obj, ok := pkg.Scope().Lookup(name).(*types.TypeName)
	if !ok {
		return nil, fmt.Errorf("%s.%s: no such type", pkg.Path(), name)
	}
	st, ok := obj.Type().Underlying().(*types.Struct)
	if !ok {
		return nil, fmt.Errorf("%s.%s is not a struct", pkg.Path(), name)
	}
	var out []string
	for f := range st.Fields() {
		if f.Exported() {
			out = append(out, f.Name())
		}
	}
	return out, nil
}

// TestAPIMentionsAreFoundThroughEveryExportedPath: the walker finds a
// domain type wherever an exported API leads to it — a function's
// parameter, an embedded field (exported or not), an element of a map of slices, a method of
// an unexported type an exported function returns, an interface's method,
// an alias, a type argument — and not in unexported fields, functions or
// types no export leads to, allowed packages, or skipped members.
func TestAPIMentionsAreFoundThroughEveryExportedPath(t *testing.T) {
	srcs := map[string]string{
		"internal/palace": "package palace\ntype Hit struct{ N int }\ntype Opts struct{}\ntype Box[T any] struct{ V T }\n",
		"internal/config": "package config\ntype Config struct{ Dir string }\n",
		"internal/app": `package app
import (
	"github.com/hivemem/hivemem/internal/config"
	"github.com/hivemem/hivemem/internal/palace"
)
func Search(q string, o palace.Opts) error { return nil }
func Load(c config.Config) {}
type SearchHit struct {
	palace.Hit
	View string
	hidden palace.Opts
}
type Result struct{ Hits map[string][]*SearchHit }
type Outer struct{ inner }
type inner struct{ Opt palace.Opts }
func (r Result) Best() Result { return r }
type reader struct{}
func (reader) Read() palace.Hit { return palace.Hit{} }
func (reader) unexported() palace.Opts { return palace.Opts{} }
func NewReader() reader { return reader{} }
type Miner interface{ Mine(palace.Opts) error }
type Digest = palace.Hit
var Boxed palace.Box[Result]
type App struct{ Store palace.Opts; Home config.Config }
func unexported(o palace.Opts) {}
type private struct{ Hit palace.Hit }
func (private) Read() palace.Hit { return palace.Hit{} }
`,
	}
	pkg := checkSources(t, srcs, "internal/app")
	got := apiDomainMentions(pkg, []string{"App.Store"})
	want := []string{
		"Boxed -> internal/palace",
		"Digest -> internal/palace",
		"Miner.Mine -> internal/palace",
		"Search -> internal/palace",
		"SearchHit.Hit -> internal/palace",
		"inner.Opt -> internal/palace",
		"reader.Read -> internal/palace",
	}
	if !slices.Equal(got, want) {
		t.Errorf("mentions\n%q\nwant\n%q", got, want)
	}
}

// checkSources type-checks the packages of srcs (module-relative path to
// one file's source, importing only each other) and returns the one at
// path.
func checkSources(t *testing.T, srcs map[string]string, path string) *types.Package {
	t.Helper()
	fset := token.NewFileSet()
	done := map[string]*types.Package{}
	var check func(path string) (*types.Package, error)
	imp := importerFunc(func(p string) (*types.Package, error) {
		return check(strings.TrimPrefix(p, module))
	})
	check = func(rel string) (*types.Package, error) {
		if p, ok := done[rel]; ok {
			return p, nil
		}
		f, err := parser.ParseFile(fset, rel+".go", srcs[rel], 0)
		if err != nil {
			return nil, err
		}
		conf := types.Config{Importer: imp}
		p, err := conf.Check(module+rel, fset, []*ast.File{f}, nil)
		done[rel] = p
		return p, err
	}
	p, err := check(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// apiDomainMentions is every "member -> package", sorted, where the
// exported API of pkg mentions a type of a package outside apiAllowed
// (module-relative when in the module). member is where the type is
// written: a function, a method (Type.Method), a field (Type.Field), a
// variable, or a type whose definition is another package's type. Members
// named in skip ("Type.Field", or a whole "Type") are passed over.
func apiDomainMentions(pkg *types.Package, skip []string) []string {
	w := apiWalker{pkg: pkg, skip: skip, seen: map[*types.TypeName]bool{}, found: map[string]bool{}}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch obj := obj.(type) {
		case *types.TypeName:
			if obj.IsAlias() {
				w.mention(name, obj.Type())
				continue
			}
			if n, ok := obj.Type().(*types.Named); ok {
				w.member(n)
			}
		default: // funcs, vars, consts
			w.mention(name, obj.Type())
		}
	}
	found := make([]string, 0, len(w.found))
	for k := range w.found {
		found = append(found, k)
	}
	slices.Sort(found)
	return found
}

// apiWalker follows pkg's exported API through every type of pkg it leads
// to, recording the mentions of types from packages not allowed.
type apiWalker struct {
	pkg   *types.Package
	skip  []string
	seen  map[*types.TypeName]bool
	found map[string]bool
}

// mention walks the type t written at where.
func (w *apiWalker) mention(where string, t types.Type) {
	switch t := t.(type) {
	case *types.Alias:
		w.mention(where, types.Unalias(t))
	case *types.Named:
		for i := range t.TypeArgs().Len() {
			w.mention(where, t.TypeArgs().At(i))
		}
		pkg := t.Obj().Pkg()
		switch {
		case pkg == nil: // error, comparable
		case pkg == w.pkg:
			w.member(t)
		case !apiPackageAllowed(pkg.Path()):
			w.found[where+" -> "+strings.TrimPrefix(pkg.Path(), module)] = true
		}
	case *types.Pointer:
		w.mention(where, t.Elem())
	case *types.Slice:
		w.mention(where, t.Elem())
	case *types.Array:
		w.mention(where, t.Elem())
	case *types.Chan:
		w.mention(where, t.Elem())
	case *types.Map:
		w.mention(where, t.Key())
		w.mention(where, t.Elem())
	case *types.Signature:
		for v := range t.Params().Variables() {
			w.mention(where, v.Type())
		}
		for v := range t.Results().Variables() {
			w.mention(where, v.Type())
		}
	case *types.Struct:
		for f := range t.Fields() {
			if f.Exported() || f.Embedded() {
				w.mention(where+"."+f.Name(), f.Type())
			}
		}
	case *types.Interface:
		for m := range t.ExplicitMethods() {
			if m.Exported() {
				w.mention(where+"."+m.Name(), m.Type())
			}
		}
		for e := range t.EmbeddedTypes() {
			w.mention(where, e)
		}
	case *types.TypeParam:
		w.mention(where, t.Constraint())
	}
}

// member walks, once, a type of pkg the API leads to: its exported (and
// embedded) fields or what it is defined as, and its exported methods.
func (w *apiWalker) member(n *types.Named) {
	n = n.Origin()
	if w.seen[n.Obj()] {
		return
	}
	w.seen[n.Obj()] = true
	name := n.Obj().Name()
	if slices.Contains(w.skip, name) {
		return
	}
	switch u := n.Underlying().(type) {
	case *types.Struct:
		for f := range u.Fields() {
			where := name + "." + f.Name()
			if (f.Exported() || f.Embedded()) && !slices.Contains(w.skip, where) {
				w.mention(where, f.Type())
			}
		}
	case *types.Interface:
		w.mention(name, u)
	default:
		w.mention(name, u)
	}
	for m := range n.Methods() {
		if m.Exported() {
			w.mention(name+"."+m.Name(), m.Type())
		}
	}
}

// apiPackageAllowed reports whether app's API may mention a type of the
// package at path: the standard library's, or one of apiAllowed.
func apiPackageAllowed(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	if !strings.Contains(first, ".") {
		return true
	}
	rel, ok := strings.CutPrefix(path, module)
	return ok && slices.Contains(apiAllowed, rel)
}
