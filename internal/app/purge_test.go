package app

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/memfile"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/purge"
	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/store/postgres/pgtest"
)

// remember writes notes or fails the test. The notes are kept as written
// (KeepSecrets): these tests plant the texts a purge must reach, as a
// secret the detector does not know, or one a user kept, would be.
func remember(t *testing.T, a *App, notes ...RememberRequest) []RememberResult {
	t.Helper()
	var out []RememberResult
	for _, n := range notes {
		n.KeepSecrets = true
		res, err := a.Remember(context.Background(), n)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, res)
	}
	return out
}

// backupNow makes a backup of agent's memory file as it is (a pin and
// unpin of a throwaway fact: any correction makes one).
func backupNow(t *testing.T, a *App, agent, fact string) {
	t.Helper()
	ctx := context.Background()
	if _, err := a.Pin(ctx, PinRequest{Agent: agent, Fact: fact, Force: true, KeepSecrets: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Unpin(ctx, UnpinRequest{Agent: agent, Fact: fact}); err != nil {
		t.Fatal(err)
	}
}

// requireNowhere fails the test when any file of the home holds s.
func requireNowhere(t *testing.T, a *App, s string, before []string) {
	t.Helper()
	if left := filesHolding(t, a.home.Root, s); len(left) > 0 {
		t.Errorf("after the purge %q is still in %v (was in %v)", s, left, before)
	}
}

// Item 1: a purge killed after it recorded its intent, before it scrubbed
// anything, is finished by the next command that opens the home; one
// killed after the memory file was clean is finished by the next purge
// (which forget --purge, finding no section, could not be).
func TestInterruptedPurgeIsFinished(t *testing.T) {
	ctx := context.Background()
	t.Setenv("HIVEMEM_EMBEDDER_PROVIDER", "none")
	root := t.TempDir()
	a := openAt(t, root)
	secret := "sk-live-KILLED-4f9a2"
	remember(t, a, RememberRequest{Agent: "alice", Heading: "pasted key", Text: "The key is " + secret + " today."})
	backupNow(t, a, "alice", "Invoices go out on the 1st")
	// A leftover of an interrupted write beside the memory file.
	mem, _ := a.home.MemoryPath("alice")
	if err := os.WriteFile(filepath.Join(filepath.Dir(mem), ".memory.md.123.tmp"), []byte("copy: "+secret+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := filesHolding(t, root, secret)
	// What a purge killed right after recording leaves: the intent only.
	st := purge.Open(a.home.PalaceDir())
	unlock, err := st.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.Begin([]purge.Text{{Text: secret}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	_ = unlock()
	a.Close()
	b := openAt(t, root) // any command
	requireNowhere(t, b, secret, before)
	if purge.Pending(b.home.PalaceDir()) {
		t.Error("the purge is still pending after the next open finished it")
	}
	hits, err := b.Search(ctx, SearchRequest{Query: "key today", Results: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits.Hits {
		if strings.Contains(h.Text, secret) {
			t.Errorf("the index still finds it: %+v", h.Hit)
		}
	}

	// Killed after the memory file was clean: the text is only in a
	// backup now. purge "TEXT" finds it there.
	secret2 := "ghp_second-secret-77Ab"
	remember(t, b, RememberRequest{Agent: "alice", Heading: "token", Text: "Token " + secret2 + " for CI."})
	backupNow(t, b, "alice", "Deploys happen on Tuesdays")
	if _, err := b.Forget(ctx, ForgetRequest{Agent: "alice", Heading: "token"}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(mem)
	if strings.Contains(string(data), secret2) {
		t.Fatal("setup: the memory file still holds the second secret")
	}
	before = filesHolding(t, root, secret2)
	if len(before) == 0 {
		t.Fatal("setup: no copy of the second secret")
	}
	res, err := b.Purge(ctx, PurgeRequest{Text: secret2})
	if err != nil {
		t.Fatal(err)
	}
	requireNowhere(t, b, secret2, before)
	if res.Places < len(before)-1 { // the index files count as one place
		t.Errorf("places = %d, want the %d files %v", res.Places, len(before), before)
	}
}

// Item 2: text that already left the memory file — an archived section,
// an unpinned fact, text forgotten without --purge, an imported session —
// is purged, by text and by the drawer id of an archived section.
func TestPurgeReachesTextThatLeftTheMemoryFile(t *testing.T) {
	ctx := context.Background()
	a := openLexical(t)
	secret := "AKIA-LEFT-THE-FILE-19"
	remember(t, a,
		RememberRequest{Agent: "coder", Heading: "deploy", Text: "Deploy with make release."},
		RememberRequest{Agent: "coder", Heading: "aws key", Text: "AWS key " + secret + " in the vault."},
		RememberRequest{Agent: "coder", Heading: "old aws", Text: "Older key " + secret + " before rotation."})
	if _, err := a.Pin(ctx, PinRequest{Agent: "coder", Fact: "The AWS key is " + secret, KeepSecrets: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Unpin(ctx, UnpinRequest{Agent: "coder", Fact: "The AWS key is " + secret}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Forget(ctx, ForgetRequest{Agent: "coder", Heading: "old aws"}); err != nil {
		t.Fatal(err)
	}
	mem, _ := a.home.MemoryPath("coder")
	data, _ := os.ReadFile(mem)
	f, _ := memfile.Parse(data)
	i, err := f.FindSection("aws key")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.reflector.Archive(ctx, "coder", []memfile.Section{f.Sections[i]}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Forget(ctx, ForgetRequest{Agent: "coder", Heading: "aws key"}); err != nil {
		t.Fatal(err)
	}
	arch, _ := a.home.ArchiveDir("coder")
	if _, err := a.palace.Mine(ctx, arch, palace.MineOptions{}); err != nil {
		t.Fatal(err)
	}
	chat := filepath.Join(t.TempDir(), "chat.jsonl")
	if err := os.WriteFile(chat, []byte(`{"role":"user","content":"my key is `+secret+`"}`+"\n"+`{"role":"assistant","content":"noted"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Import(ctx, ImportRequest{Agent: "coder", Format: "generic", Paths: []string{chat}, KeepSecrets: true}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(mem); strings.Contains(string(data), secret) {
		t.Fatal("setup: the memory file still holds the secret")
	}
	before := filesHolding(t, a.home.Root, secret)
	kinds := strings.Join(before, " ")
	for _, want := range []string{"archive", "forgotten", "sessions"} {
		if !strings.Contains(kinds, want) {
			t.Fatalf("setup: no copy in %s: %v", want, before)
		}
	}

	// forget --purge by the drawer id of the archived section.
	hits, err := a.Search(ctx, SearchRequest{Query: "vault", Agent: "coder", Results: 10})
	if err != nil {
		t.Fatal(err)
	}
	var archived string
	for _, h := range hits.Hits {
		if strings.HasPrefix(h.Source, "hive/archive/") && strings.Contains(h.Text, "vault") {
			archived = h.ID
		}
	}
	if archived == "" {
		t.Fatalf("setup: the archived section is not found: %+v", hits.Hits)
	}
	res, err := a.Forget(ctx, ForgetRequest{Agent: "coder", Drawer: archived, Purge: true, Confirm: "coder"})
	if err != nil {
		t.Fatalf("forget --purge of an archived drawer: %v", err)
	}
	if len(res.Purged) == 0 {
		t.Errorf("forget --purge of an archived drawer purged nothing: %+v", res)
	}
	// forget --purge by the heading of a section forgotten without it.
	if _, err := a.Forget(ctx, ForgetRequest{Agent: "coder", Heading: "old aws", Purge: true, Confirm: "coder"}); err != nil {
		t.Fatalf("forget --purge of a forgotten section: %v", err)
	}
	if left := filesHolding(t, a.home.Root, "before rotation"); len(left) > 0 {
		t.Errorf("the forgotten section is still in %v", left)
	}
	if _, err := a.Purge(ctx, PurgeRequest{Text: secret}); err != nil {
		t.Fatal(err)
	}
	requireNowhere(t, a, secret, before)
	if data, _ := os.ReadFile(mem); !strings.Contains(string(data), "Deploy with make release.") {
		t.Errorf("the purge took more than the text:\n%s", data)
	}
}

// Item 3: a purged section leaves no line of it in a backup, even a short
// one, even where the backup holds an earlier version of the section.
func TestPurgedSectionLeavesNoShortLineInBackups(t *testing.T) {
	ctx := context.Background()
	a := openLexical(t)
	remember(t, a,
		RememberRequest{Agent: "alice", Heading: "deploy", Text: "Deploy with make release."},
		RememberRequest{Agent: "alice", Heading: "vault login", Text: "Vault login for the shop:\npin 4417\nxq7z"})
	backupNow(t, a, "alice", "Invoices go out on the 1st")
	// The section grows after the backup: the backup's copy is no longer
	// the section word for word.
	mem, _ := a.home.MemoryPath("alice")
	data, _ := os.ReadFile(mem)
	grown := strings.Replace(string(data), "xq7z\n", "xq7z\nrotate yearly\n", 1)
	if grown == string(data) {
		t.Fatalf("setup: no xq7z line in\n%s", data)
	}
	if err := os.WriteFile(mem, []byte(grown), 0o644); err != nil {
		t.Fatal(err)
	}
	before := filesHolding(t, a.home.Root, "xq7z")
	if !slices.ContainsFunc(before, func(p string) bool { return strings.HasPrefix(p, "hive/backups/") }) {
		t.Fatalf("setup: no backup holds the section: %v", before)
	}
	if _, err := a.Forget(ctx, ForgetRequest{Agent: "alice", Heading: "vault login", Purge: true, Confirm: "alice"}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"xq7z", "pin 4417", "Vault login for the shop"} {
		requireNowhere(t, a, s, before)
	}
	if got, _ := os.ReadFile(mem); !strings.Contains(string(got), "Deploy with make release.") {
		t.Errorf("the purge took more than the section:\n%s", got)
	}
}

// Item 4: a purged superseded section leaves its heading nowhere: not in
// the replacing section's "> supersedes:" line, the index or the log.
func TestPurgedSupersededSectionLeavesNoHeading(t *testing.T) {
	ctx := context.Background()
	a := openLexical(t)
	heading := "vault token QX77-hdr"
	remember(t, a, RememberRequest{Agent: "alice", Heading: heading, Text: "The vault token is tok-9z."})
	old := remember(t, a, RememberRequest{Agent: "alice", Heading: "vault token now", Text: "The vault token is rotated to tok-10a.", Supersedes: heading})[0]
	if old.Supersedes == nil {
		t.Fatalf("setup: nothing superseded: %+v", old)
	}
	before := filesHolding(t, a.home.Root, "QX77-hdr")
	if len(before) < 3 {
		t.Fatalf("setup: the heading is only in %v", before)
	}
	if _, err := a.Forget(ctx, ForgetRequest{Agent: "alice", Heading: heading, Purge: true, Confirm: "alice"}); err != nil {
		t.Fatal(err)
	}
	requireNowhere(t, a, "QX77-hdr", before)
	mem, _ := a.home.MemoryPath("alice")
	if got, _ := os.ReadFile(mem); !strings.Contains(string(got), "rotated to tok-10a") {
		t.Errorf("the replacing section went too:\n%s", got)
	}
}

// Item 5: the event log keeps no purged text, however JSON escaped it
// (unpin, pin --replaces, supersede and forget events carry texts).
func TestPurgeScrubsTheEventLog(t *testing.T) {
	ctx := context.Background()
	a := openLexical(t)
	secret := `pw"<hunter&22>"x`
	remember(t, a, RememberRequest{Agent: "alice", Heading: "deploy", Text: "Deploy with make release."})
	if _, err := a.Pin(ctx, PinRequest{Agent: "alice", Fact: "The admin password is " + secret, KeepSecrets: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Pin(ctx, PinRequest{Agent: "alice", Fact: "The admin password is " + secret + " still", Replaces: "The admin password is " + secret, KeepSecrets: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Unpin(ctx, UnpinRequest{Agent: "alice", Fact: "The admin password is " + secret + " still"}); err != nil {
		t.Fatal(err)
	}
	evs, err := a.events.Read(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	holding := func(evs []string) int {
		n := 0
		for _, e := range evs {
			if strings.Contains(e, secret) {
				n++
			}
		}
		return n
	}
	var texts []string
	for _, e := range evs {
		texts = append(texts, fmtEvent(e.Data))
	}
	if holding(texts) < 2 {
		t.Fatalf("setup: the log holds the secret in %d events", holding(texts))
	}
	if _, err := a.Purge(ctx, PurgeRequest{Text: secret}); err != nil {
		t.Fatal(err)
	}
	evs, err = a.events.Read(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	texts = texts[:0]
	for _, e := range evs {
		texts = append(texts, fmtEvent(e.Data))
	}
	if n := holding(texts); n > 0 || len(evs) < 3 {
		t.Errorf("after the purge %d of %d events hold the secret", n, len(evs))
	}
	for _, esc := range []string{secret, `pw\"\u003chunter\u002622\u003e\"x`, `pw\"<hunter&22>\"x`} {
		requireNowhere(t, a, esc, nil)
	}
}

// fmtEvent is an event's data as one string.
func fmtEvent(d map[string]any) string {
	var b strings.Builder
	for k, v := range d {
		b.WriteString(k + "=")
		if s, ok := v.(string); ok {
			b.WriteString(s)
		}
		b.WriteString(" ")
	}
	return b.String()
}

// Item 6: a set-aside damaged index that holds the text goes.
func TestPurgeRemovesASetAsideIndexHoldingIt(t *testing.T) {
	ctx := context.Background()
	t.Setenv("HIVEMEM_EMBEDDER_PROVIDER", "none")
	root := t.TempDir()
	a := openAt(t, root)
	secret := "sk-live-SETASIDE-31"
	remember(t, a, RememberRequest{Agent: "alice", Heading: "pasted", Text: "Key " + secret + " here."})
	a.Close()
	h := a.home
	aside, err := testIndex{h: h}.SetAside(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	b := openAt(t, root)
	before := filesHolding(t, root, secret)
	if !slices.Contains(before, h.Rel(aside)) {
		t.Fatalf("setup: the set-aside index %s does not hold the secret: %v", h.Rel(aside), before)
	}
	res, err := b.Purge(ctx, PurgeRequest{Text: secret})
	if err != nil {
		t.Fatal(err)
	}
	requireNowhere(t, b, secret, before)
	if !slices.ContainsFunc(res.Files, func(p PurgePlace) bool { return p.Kind == "set-aside index" && p.Removed }) {
		t.Errorf("the result names no set-aside index removed: %+v", res.Files)
	}
}

// Item 7: another agent's copy of the same secret is purged too, and the
// result says whose files were touched.
func TestPurgeReachesEveryAgentsCopy(t *testing.T) {
	ctx := context.Background()
	a := openLexical(t)
	secret := "sk-live-SHARED-8812"
	remember(t, a,
		RememberRequest{Agent: "alice", Heading: "pasted key", Text: "Billing key " + secret + " for the shop."},
		RememberRequest{Agent: "bob", Heading: "notes", Text: "Alice told me the billing key " + secret + " today."},
		RememberRequest{Agent: "bob", Heading: "lunch", Text: "Lunch is at noon."})
	before := filesHolding(t, a.home.Root, secret)
	res, err := a.Forget(ctx, ForgetRequest{Agent: "alice", Heading: "pasted key", Purge: true, Confirm: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	requireNowhere(t, a, secret, before)
	if res.Purge == nil || !slices.Equal(res.Purge.Agents, []string{"alice", "bob"}) {
		t.Errorf("purge report = %+v, want agents alice and bob", res.Purge)
	}
	bob, _ := a.home.MemoryPath("bob")
	if got, _ := os.ReadFile(bob); !strings.Contains(string(got), "Alice told me the billing key "+purge.Marker+" today.") || !strings.Contains(string(got), "Lunch is at noon.") {
		t.Errorf("bob's memory after the purge:\n%s", got)
	}
}

// A purged text that comes back — a note, a pinned fact, an import of a
// transcript that still holds it — is redacted on the way in.
func TestPurgedTextIsRedactedOnTheWayIn(t *testing.T) {
	ctx := context.Background()
	a := openLexical(t)
	secret := "sk-live-COMEBACK-551"
	remember(t, a, RememberRequest{Agent: "alice", Heading: "pasted", Text: "Key " + secret + " here."})
	if _, err := a.Purge(ctx, PurgeRequest{Text: secret}); err != nil {
		t.Fatal(err)
	}
	remember(t, a, RememberRequest{Agent: "alice", Heading: "again", Text: "Once more: " + secret})
	if _, err := a.Pin(ctx, PinRequest{Agent: "alice", Fact: "The key is " + secret, KeepSecrets: true}); err != nil {
		t.Fatal(err)
	}
	chat := filepath.Join(t.TempDir(), "chat.jsonl")
	if err := os.WriteFile(chat, []byte(`{"role":"user","content":"the key `+secret+` again"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := a.Import(ctx, ImportRequest{Agent: "alice", Format: "generic", Paths: []string{chat}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Purged != 1 {
		t.Errorf("import left out %d purged texts, want 1", res.Purged)
	}
	requireNowhere(t, a, secret, nil)
	mem, _ := a.home.MemoryPath("alice")
	if got, _ := os.ReadFile(mem); strings.Count(string(got), purge.Marker) < 2 {
		t.Errorf("the note and the fact are not written redacted:\n%s", got)
	}
}

// A dry run changes nothing and says where; a text too short to purge is
// refused before anything changes.
func TestPurgeDryRunAndShortText(t *testing.T) {
	ctx := context.Background()
	a := openLexical(t)
	secret := "sk-live-DRYRUN-0007"
	remember(t, a,
		RememberRequest{Agent: "alice", Heading: "pasted", Text: "Key " + secret + " here."},
		RememberRequest{Agent: "bob", Heading: "copy", Text: "Copy " + secret + "."})
	before := filesHolding(t, a.home.Root, secret)
	res, err := a.Purge(ctx, PurgeRequest{Text: secret, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := filesHolding(t, a.home.Root, secret); !slices.Equal(got, before) {
		t.Errorf("a dry run changed files: %v, was %v", got, before)
	}
	if !res.DryRun || len(res.Files) != 2 || res.Drawers != 2 || res.Places != 3 || !slices.Equal(res.Agents, []string{"alice", "bob"}) {
		t.Errorf("dry run = %+v, want both memory files and 2 drawers", res)
	}
	if _, err := os.Stat(purge.Path(a.home.PalaceDir())); err == nil {
		t.Error("a dry run recorded a purge")
	}
	for _, short := range []string{"the", "", "   ", "1234567"} {
		if _, err := a.Purge(ctx, PurgeRequest{Text: short}); !errors.Is(err, ErrInvalid) {
			t.Errorf("purge %q: err = %v, want a bad request", short, err)
		}
	}
	if got := filesHolding(t, a.home.Root, secret); !slices.Equal(got, before) {
		t.Errorf("refused purges changed files: %v", got)
	}
}

// In a PostgreSQL palace two homes share, a purge in one takes every
// drawer that held the text out at once, the other home's too; the other
// home's own files are its own to purge (its next mine would bring its
// copy back, as the docs say).
func TestPurgeInASharedPostgresPalace(t *testing.T) {
	dsn := pgtest.Schema(t, pgtest.EnvPostgres)
	ctx := context.Background()
	t.Setenv("HIVEMEM_EMBEDDER_PROVIDER", "none")
	t.Setenv("HIVEMEM_PALACE_BACKEND", "postgres")
	t.Setenv("HIVEMEM_PALACE_DSN", dsn)
	a, b := openAt(t, t.TempDir()), openAt(t, t.TempDir())
	secret := "sk-live-SHAREDPG-4242"
	remember(t, a, RememberRequest{Agent: "alice", Heading: "pasted", Text: "Key " + secret + " here."})
	remember(t, b, RememberRequest{Agent: "bob", Heading: "copy", Text: "Bob has " + secret + " too."})
	holding := func() int {
		ds, err := a.store.List(ctx, store.Filter{}, 0)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, d := range ds {
			if strings.Contains(d.Text, secret) {
				n++
			}
		}
		return n
	}
	if n := holding(); n != 2 {
		t.Fatalf("setup: %d drawers hold the secret, want 2", n)
	}
	res, err := a.Purge(ctx, PurgeRequest{Text: secret})
	if err != nil {
		t.Fatal(err)
	}
	if n := holding(); n != 0 || res.Drawers != 2 {
		t.Errorf("after the purge %d drawers hold the secret (result: %d drawers)", n, res.Drawers)
	}
	hits, err := b.Search(ctx, SearchRequest{Query: "Bob has", Results: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits.Hits {
		if strings.Contains(h.Text, secret) {
			t.Errorf("the other home still finds it: %+v", h.Hit)
		}
	}
	requireNowhere(t, a, secret, nil)
	if left := filesHolding(t, b.home.Root, secret); len(left) == 0 {
		t.Error("the other home's files changed: a purge reaches only its own home")
	}
}

// The answer of a forget --purge names what went, never the text: a
// heading made from a note's first words, or the line, may hold it.
func TestForgetPurgeAnswerHoldsNoText(t *testing.T) {
	ctx := context.Background()
	a := openLexical(t)
	secret := "sk-live-ANSWER-6612"
	res := remember(t, a,
		RememberRequest{Agent: "alice", Text: secret + " is the key I pasted"},
		RememberRequest{Agent: "alice", Heading: "other", Text: "Line one.\nthe token tok-ANSWER-7723 here"})
	for _, req := range []ForgetRequest{
		{Agent: "alice", Heading: res[0].Section.Heading, Purge: true, Confirm: "alice"},
		{Agent: "alice", Line: "tok-ANSWER-7723", Purge: true, Confirm: "alice"},
	} {
		out, err := a.Forget(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(out)
		if strings.Contains(string(b), secret) || strings.Contains(string(b), "ANSWER-7723") {
			t.Errorf("the answer holds the text: %s", b)
		}
	}
	requireNowhere(t, a, secret, nil)
}

// A purged section takes its key-like words out of every file, but not its
// ordinary lines one by one: the same line in another section, or in
// another agent's file, is not the purged text and stays.
func TestSectionPurgeLeavesOrdinaryLinesElsewhere(t *testing.T) {
	ctx := context.Background()
	a := openLexical(t)
	key := "Zq8wK3xY5vB7nM2p"
	line := "- Added a table-driven test for every error path."
	remember(t, a,
		RememberRequest{Agent: "alice", Heading: "pasted key", Text: "The staging key " + key + "\n" + line},
		RememberRequest{Agent: "alice", Heading: "tests", Text: line},
		RememberRequest{Agent: "bob", Heading: "tests too", Text: line + "\nAlice said " + key})
	if _, err := a.Forget(ctx, ForgetRequest{Agent: "alice", Heading: "pasted key", Purge: true, Confirm: "alice"}); err != nil {
		t.Fatal(err)
	}
	requireNowhere(t, a, key, nil)
	for _, agent := range []string{"alice", "bob"} {
		mem, _ := a.home.MemoryPath(agent)
		if got, _ := os.ReadFile(mem); !strings.Contains(string(got), line) {
			t.Errorf("%s's other section lost its line %q:\n%s", agent, line, got)
		}
	}
}
