package app

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/memfile"
	"github.com/hivemem/hivemem/internal/palace"
)

// filesHolding lists every file under root whose bytes contain s.
func filesHolding(t *testing.T, root, s string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(s)) {
			rel, _ := filepath.Rel(root, p)
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A purged secret leaves no byte in any file of the home: memory file,
// archive, backups, the index (SQLite file and log) and the event log.
func TestPurgeLeavesNoByteInTheHome(t *testing.T) {
	requireModel(t)
	ctx := context.Background()
	a := openAt(t, t.TempDir())
	secret := "sk-live-9Qz4Wx7Rt2Vb"
	for _, n := range []RememberRequest{
		{Agent: "alice", Heading: "deploy", Text: "Deploy with make release."},
		// Kept as written (keep_secrets), as one written before redaction
		// was on: the purge is what takes it out.
		{Agent: "alice", Heading: "pasted key", Text: "The billing API key is " + secret + " for the shop.\nIt rotates monthly.", KeepSecrets: true},
	} {
		if _, err := a.Remember(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	// A backup of the file with the secret (any correction makes one), and
	// a copy in the archive (as condensation or a restore leaves).
	if _, err := a.Pin(ctx, PinRequest{Agent: "alice", Fact: "Invoices go out on the 1st"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Unpin(ctx, UnpinRequest{Agent: "alice", Fact: "Invoices go out on the 1st"}); err != nil {
		t.Fatal(err)
	}
	path, _ := a.home.MemoryPath("alice")
	data, _ := os.ReadFile(path)
	f, _ := memfile.Parse(data)
	i, err := f.FindSection("pasted key")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.reflector.Archive(ctx, "alice", []memfile.Section{f.Sections[i]}); err != nil {
		t.Fatal(err)
	}
	arch, _ := a.home.ArchiveDir("alice")
	if _, err := a.palace.Mine(ctx, arch, palace.MineOptions{}); err != nil {
		t.Fatal(err)
	}
	before := filesHolding(t, a.home.Root, secret)
	if len(before) < 4 {
		t.Fatalf("the secret is in only %v before the purge: the test would show nothing", before)
	}

	// Without the confirmation nothing happens.
	if _, err := a.Forget(ctx, ForgetRequest{Agent: "alice", Heading: "pasted key", Purge: true}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("unconfirmed purge: err = %v", err)
	}
	res, err := a.Forget(ctx, ForgetRequest{Agent: "alice", Heading: "pasted key", Purge: true, Confirm: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Kept != "" || len(res.Purged) < 2 || res.DrawersRemoved < 2 {
		t.Errorf("result = %+v: want nothing kept, the backup and the archive purged, the drawers of both removed", res)
	}
	if left := filesHolding(t, a.home.Root, secret); len(left) > 0 {
		t.Errorf("after the purge the secret is still in %v (was in %v)", left, before)
	}
	// The rest stays, and the index still answers.
	if got, _ := os.ReadFile(path); !bytes.Contains(got, []byte("Deploy with make release.")) {
		t.Errorf("the purge took more than the section:\n%s", got)
	}
	hits, err := a.Search(ctx, SearchRequest{Query: "billing API key", Results: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits.Hits {
		if strings.Contains(h.Text, "rotates") {
			t.Errorf("a purged drawer is still found: %+v", h.Hit)
		}
	}
	if err := a.store.Check(ctx); err != nil {
		t.Errorf("index after the purge: %v", err)
	}
}

// An agent bound to its own memory cannot forget, unpin or supersede in
// another's, by heading or by drawer id.
func TestCorrectionsKeepToTheCallersMemory(t *testing.T) {
	ctx := context.Background()
	a := openLexical(t)
	if _, err := a.Remember(ctx, RememberRequest{Agent: "alice", Heading: "secret plan", Text: "Alice's plan."}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Pin(ctx, PinRequest{Agent: "alice", Fact: "Alice's fact"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Remember(ctx, RememberRequest{Agent: "carol", Heading: "own", Text: "Carol's note."}); err != nil {
		t.Fatal(err)
	}
	hits, err := a.Search(ctx, SearchRequest{Query: "plan", Agent: "alice"})
	if err != nil || len(hits.Hits) == 0 {
		t.Fatalf("search: %v %v", hits, err)
	}
	aliceDrawer := hits.Hits[0].ID
	carol := Scope{Caller: "carol", Own: true}
	for _, c := range []struct {
		name string
		do   func() error
		want string
	}{
		{"forget another's section", func() error {
			_, err := a.Forget(ctx, ForgetRequest{Agent: "alice", Heading: "secret plan", Scope: carol})
			return err
		}, `writes only to agent "carol"`},
		{"forget another's drawer as one's own", func() error {
			_, err := a.Forget(ctx, ForgetRequest{Drawer: aliceDrawer, Scope: carol})
			return err
		}, "not in agent carol's memory file"},
		{"unpin another's fact", func() error {
			_, err := a.Unpin(ctx, UnpinRequest{Agent: "alice", Fact: "Alice's fact", Scope: carol})
			return err
		}, `writes only to agent "carol"`},
		{"supersede another's drawer", func() error {
			_, err := a.Remember(ctx, RememberRequest{Text: "new plan", Supersedes: aliceDrawer, Scope: carol})
			return err
		}, "not in agent carol's memory file"},
		{"purge another's", func() error {
			_, err := a.Forget(ctx, ForgetRequest{Agent: "alice", Heading: "secret plan", Purge: true, Confirm: "alice", Scope: carol})
			return err
		}, `writes only to agent "carol"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := c.do(); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want a refusal saying %q", err, c.want)
			}
		})
	}
	path, _ := a.home.MemoryPath("alice")
	if got, _ := os.ReadFile(path); !bytes.Contains(got, []byte("Alice's plan.")) || !bytes.Contains(got, []byte("Alice's fact")) {
		t.Errorf("alice's memory changed:\n%s", got)
	}
}

// A repeat writes nothing and names the note it repeats; Force writes it.
func TestRepeatsAreNotWritten(t *testing.T) {
	ctx := context.Background()
	a := openLexical(t)
	first, err := a.Remember(ctx, RememberRequest{Agent: "alice", Heading: "deploy", Text: "Deploy the shop with make deploy."})
	if err != nil {
		t.Fatal(err)
	}
	path, _ := a.home.MemoryPath("alice")
	before, _ := os.ReadFile(path)
	res, err := a.Remember(ctx, RememberRequest{Agent: "alice", Text: "deploy the shop with make deploy"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Duplicate == nil || res.Duplicate.Why != "identical" || res.Duplicate.Heading != first.Section.Heading || len(res.Duplicate.Of) != 20 {
		t.Fatalf("repeat: %+v (duplicate %+v)", res, res.Duplicate)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Error("a repeat changed the file")
	}
	// A changed value is news.
	if res, err := a.Remember(ctx, RememberRequest{Agent: "alice", Text: "Deploy the shop with make release."}); err != nil || res.Duplicate != nil {
		t.Errorf("changed value: %+v, %v", res, err)
	}
	if res, err := a.Remember(ctx, RememberRequest{Agent: "alice", Text: "deploy the shop with make deploy", Force: true}); err != nil || res.Duplicate != nil || res.Section.Heading == "" {
		t.Errorf("forced repeat: %+v, %v", res, err)
	}
	// Pins: the same fact reworded is a repeat; word for word it is
	// "already pinned", as always.
	if _, err := a.Pin(ctx, PinRequest{Agent: "alice", Fact: "Releases ship on Tuesdays"}); err != nil {
		t.Fatal(err)
	}
	if p, err := a.Pin(ctx, PinRequest{Agent: "alice", Fact: "releases ship on Tuesdays."}); err != nil || p.Duplicate == nil || p.Added {
		t.Errorf("reworded pin: %+v, %v", p, err)
	}
	if p, err := a.Pin(ctx, PinRequest{Agent: "alice", Fact: "- Releases ship on Tuesdays"}); err != nil || p.Duplicate != nil || p.Added {
		t.Errorf("same pin: %+v, %v", p, err)
	}
	if p, err := a.Pin(ctx, PinRequest{Agent: "alice", Fact: "releases ship on Tuesdays.", Force: true}); err != nil || !p.Added {
		t.Errorf("forced pin: %+v, %v", p, err)
	}
}

// remember --supersedes by drawer id marks the old section; the new
// section records what it replaces; search leaves the old one out.
func TestRememberSupersedesByDrawerID(t *testing.T) {
	ctx := context.Background()
	a := openLexical(t)
	if _, err := a.Remember(ctx, RememberRequest{Agent: "alice", Heading: "timeout", Text: "The export timeout is 120 seconds."}); err != nil {
		t.Fatal(err)
	}
	hits, err := a.Search(ctx, SearchRequest{Query: "export timeout"})
	if err != nil || len(hits.Hits) != 1 {
		t.Fatalf("search: %+v, %v", hits, err)
	}
	old := hits.Hits[0]
	res, err := a.Remember(ctx, RememberRequest{Agent: "alice", Heading: "timeout now", Text: "The export timeout is 300 seconds.", Supersedes: old.ID})
	if err != nil {
		t.Fatal(err)
	}
	if res.Supersedes == nil || res.Supersedes.Heading != old.Heading {
		t.Fatalf("supersedes = %+v, want %q", res.Supersedes, old.Heading)
	}
	hits, err = a.Search(ctx, SearchRequest{Query: "export timeout"})
	if err != nil || len(hits.Hits) != 1 || !strings.Contains(hits.Hits[0].Text, "300") {
		t.Errorf("search after supersession: %+v, %v", hits.Hits, err)
	}
	hits, err = a.Search(ctx, SearchRequest{Query: "export timeout", IncludeSuperseded: true})
	if err != nil || len(hits.Hits) != 2 {
		t.Errorf("search with superseded: %+v, %v", hits.Hits, err)
	}
	for _, h := range hits.Hits {
		if old := strings.Contains(h.Text, "120"); old != (h.SupersededReason == palace.SupersededExplicit) {
			t.Errorf("hit %q: superseded_by %q (%s), want the explicit mark only on the old note", h.Text, h.SupersededBy, h.SupersededReason)
		}
	}
	evs, _ := a.events.Read(0, nil)
	found := false
	for _, e := range evs {
		found = found || e.Kind == "supersede" && e.Agent == "alice"
	}
	if !found {
		t.Errorf("no supersede event in %+v", evs)
	}
}

// TestCorrectionsNameWhatIsMissing: a correction whose section, line or
// fact is not in the file is bad input that says what is missing, not
// the layers of the write it failed in (atomicio, the file's absolute
// path on the server), for the CLI, the API and MCP alike; an agent
// without a memory file is not found (the API's 404), as for a read or a
// condensation.
func TestCorrectionsNameWhatIsMissing(t *testing.T) {
	ctx := context.Background()
	a := openLexical(t)
	if _, err := a.Remember(ctx, RememberRequest{Agent: "alice", Heading: "login fix", Text: "The cookie skew."}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Pin(ctx, PinRequest{Agent: "alice", Fact: "Releases ship on Tuesdays"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		do   func() error
		want string
		is   error // ErrInvalid when nil
	}{
		{"forget a heading", func() error {
			_, err := a.Forget(ctx, ForgetRequest{Agent: "alice", Heading: "no such heading"})
			return err
		}, `forget: no section "no such heading" in the file`, nil},
		{"forget a line", func() error {
			_, err := a.Forget(ctx, ForgetRequest{Agent: "alice", Line: "zzz"})
			return err
		}, `forget: memfile: remove line: no line contains "zzz"`, nil},
		{"supersede", func() error {
			_, err := a.Remember(ctx, RememberRequest{Agent: "alice", Text: "new", Supersedes: "no such heading"})
			return err
		}, `remember: no section "no such heading" in the file`, nil},
		{"unpin", func() error {
			_, err := a.Unpin(ctx, UnpinRequest{Agent: "alice", Fact: "no such fact"})
			return err
		}, `unpin: "no such fact" is not a pinned fact of hive/agents/alice/memory.md`, nil},
		{"forget, no file", func() error {
			_, err := a.Forget(ctx, ForgetRequest{Agent: "nobody", Heading: "x"})
			return err
		}, "forget: agent nobody has no memory file", ErrNotFound},
		{"unpin, no file", func() error {
			_, err := a.Unpin(ctx, UnpinRequest{Agent: "nobody", Fact: "x"})
			return err
		}, "unpin: agent nobody has no memory file", ErrNotFound},
		{"pin --replaces, no file", func() error {
			_, err := a.Pin(ctx, PinRequest{Agent: "nobody", Fact: "x", Replaces: "y"})
			return err
		}, "pin --replaces: agent nobody has no memory file", ErrNotFound},
		{"supersede, no file", func() error {
			_, err := a.Remember(ctx, RememberRequest{Agent: "nobody", Text: "new", Supersedes: "y"})
			return err
		}, "remember: --supersedes: agent nobody has no memory file to supersede a section of", ErrNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := c.is
			if is == nil {
				is = ErrInvalid
			}
			if err := c.do(); err == nil || err.Error() != c.want || !errors.Is(err, is) {
				t.Errorf("err = %v; want %q, an error of kind %v", err, c.want, is)
			}
		})
	}
}
