package reflector

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseBackupName(t *testing.T) {
	cases := []struct {
		name string
		ok   bool
		seq  int
	}{
		{"20261129T135100Z", true, 1},
		{"20261129T135100Z-2", true, 2},
		{"20261129T135100Z-10", true, 10},
		{"20261129T135100Z-0", false, 0},
		{"20261329T135100Z", false, 0}, // month 13
		{"20261129T135100", false, 0},
		{"../20261129T135100Z", false, 0},
		{"20261129T135100Z/../x", false, 0},
		{"latest", false, 0},
		{"", false, 0},
	}
	for _, c := range cases {
		_, seq, ok := parseBackupName(c.name)
		if ok != c.ok || seq != c.seq {
			t.Errorf("parseBackupName(%q) = %d, %v; want %d, %v", c.name, seq, ok, c.seq, c.ok)
		}
	}
}

// TestBackupRetention: one backup per swap, suffixed when the second is
// taken, pruned to the retention count per agent, newest first.
func TestBackupRetention(t *testing.T) {
	e := newEnv(t, &fakeSum{})
	e.cfg.Reflector.Retention = 3
	e.cfg.Reflector.RecentKeep = 2
	// Another agent's backup in the same second must survive alice's
	// pruning.
	if _, err := writeBackup(e.home, "bob", []byte("bob's file\n"), e.now); err != nil {
		t.Fatal(err)
	}
	data := string(memoryFile(10, 2000))
	for i := range 5 {
		e.write("alice", []byte(data))
		res, err := e.r.Condense(context.Background(), "alice", Options{Force: true})
		if err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		data = string(e.read("alice"))
		for j := range 6 {
			data += sectionText(100*i+j, 2000)
		}
		want := "20261129T135100Z"
		if i > 0 {
			want += "-" + string(rune('1'+i))
		}
		if res.Backup != want {
			t.Errorf("round %d: backup %s, want %s", i, res.Backup, want)
		}
	}
	var names []string
	for _, b := range e.backups("alice") {
		names = append(names, b.Name)
	}
	if want := []string{"20261129T135100Z-5", "20261129T135100Z-4", "20261129T135100Z-3"}; !slices.Equal(names, want) {
		t.Errorf("alice backups %v, want %v", names, want)
	}
	if bs := e.backups("bob"); len(bs) != 1 || bs[0].Name != "20261129T135100Z" {
		t.Errorf("bob's backup was pruned: %+v", bs)
	}
	if all, _ := Backups(e.home, ""); len(all) != 4 {
		t.Errorf("all backups: %d, want 4", len(all))
	}
	if _, err := os.Stat(filepath.Join(e.home.BackupsDir(), "20261129T135100Z-2")); !os.IsNotExist(err) {
		t.Errorf("pruned stamp directory left behind: %v", err)
	}
	// A clock that went back still makes the newest backup.
	e.now = e.now.Add(-time.Hour)
	e.write("alice", []byte(data))
	if res, err := e.r.Condense(context.Background(), "alice", Options{Force: true}); err != nil || res.Backup != "20261129T135100Z-6" {
		t.Errorf("backup after clock step back: %q, %v", res.Backup, err)
	}
	if bs := e.backups("alice"); len(bs) != 3 || bs[0].Name != "20261129T135100Z-6" {
		t.Errorf("newest backup pruned: %+v", bs)
	}
}

// TestRestore puts a backup back, keeping the replaced file as a backup.
func TestRestore(t *testing.T) {
	e := newEnv(t, &fakeSum{})
	ctx := context.Background()
	orig := memoryFile(30, 1500)
	e.write("alice", orig)

	if _, err := e.r.Restore(ctx, "alice", Latest); err == nil || !strings.Contains(err.Error(), "agent alice has no backups") {
		t.Errorf("restore without backups: %v", err)
	}
	res, err := e.r.Condense(ctx, "alice", Options{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	condensed := e.read("alice")
	e.now = e.now.Add(5e9)
	e.miner.paths = nil

	rr, err := e.r.Restore(ctx, "alice", res.Backup)
	if err != nil {
		t.Fatal(err)
	}
	if string(e.read("alice")) != string(orig) {
		t.Error("restore did not put the original back")
	}
	if rr.Backup != res.Backup || rr.PreRestoreBackup != "20261129T135105Z" || rr.NewBytes != int64(len(orig)) || rr.OldBytes != int64(len(condensed)) {
		t.Errorf("restore result %+v", rr)
	}
	pre, _ := os.ReadFile(filepath.Join(e.home.BackupsDir(), rr.PreRestoreBackup, "alice", "memory.md"))
	if string(pre) != string(condensed) {
		t.Error("the replaced file was not backed up")
	}
	if evs := e.eventsOf("restore"); len(evs) != 1 || evs[0].Data["backup"] != res.Backup {
		t.Errorf("restore events %+v", evs)
	}
	// The condensed history the restore takes out is archived (the
	// evicted sections it summarised are there already), then mined.
	archive := filepath.Join(e.home.ArchiveRoot(), "alice", "2026-11.md")
	if rr.Archived != 1 || rr.Archive != "hive/archive/alice/2026-11.md" ||
		!strings.Contains(e.archiveText("alice"), "lines taken out by restoring backup "+res.Backup) {
		t.Errorf("archived %d sections in %q; archive:\n%s", rr.Archived, rr.Archive, e.archiveText("alice"))
	}
	if !slices.Equal(e.miner.paths, []string{archive, e.path("alice")}) {
		t.Errorf("mined %v", e.miner.paths)
	}
	// Restoring what is already there changes nothing.
	if rr, err := e.r.Restore(ctx, "alice", res.Backup); err != nil || !rr.Unchanged {
		t.Errorf("second restore: %+v %v", rr, err)
	}
	// Latest is the pre-restore backup: restoring it undoes the restore.
	if _, err := e.r.Restore(ctx, "alice", Latest); err != nil || string(e.read("alice")) != string(condensed) {
		t.Errorf("undo restore: %v", err)
	}

	for _, c := range []struct{ agent, name, err string }{
		{"alice", "20990101T000000Z", "agent alice has no backup 20990101T000000Z"},
		{"alice", "../../etc/passwd", `backup name "../../etc/passwd" is not valid`},
		{"alice", "", `backup name "" is not valid`},
		{"../x", Latest, "invalid agent id"},
	} {
		if _, err := e.r.Restore(ctx, c.agent, c.name); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("Restore(%q, %q) err = %v, want %q", c.agent, c.name, err, c.err)
		}
	}
	// A corrupt backup is refused, not written over the memory file.
	bad := filepath.Join(e.home.BackupsDir(), "20300101T000000Z", "alice")
	must(t, os.MkdirAll(bad, 0o755))
	must(t, os.WriteFile(filepath.Join(bad, "memory.md"), []byte("bin\x00ary"), 0o644))
	if _, err := e.r.Restore(ctx, "alice", Latest); err == nil || !strings.Contains(err.Error(), "not a usable memory file") {
		t.Errorf("corrupt backup: %v", err)
	}
	if string(e.read("alice")) != string(condensed) {
		t.Error("a refused restore changed the file")
	}
}

// TestRestoreIsLeftAlone: after a restore, automatic passes do not condense
// the file again while it is what was restored (and say why); a change to
// the file ends the hold; so does a forced condensation.
func TestRestoreIsLeftAlone(t *testing.T) {
	e := newEnv(t, &fakeSum{})
	e.cfg.Reflector.SectionTrigger = 20 // the restored file is due by its triggers
	ctx := context.Background()
	orig := memoryFile(30, 1500)
	e.write("alice", orig)
	res, err := e.r.Condense(ctx, "alice", Options{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	e.now = e.now.Add(5e9)
	rr, err := e.r.Restore(ctx, "alice", res.Backup)
	if err != nil || !rr.Held {
		t.Fatalf("restore = %+v, %v", rr, err)
	}
	if h := e.r.State("alice").Restored; h == nil || h.Backup != res.Backup {
		t.Fatalf("no restore hold recorded: %+v", e.r.State("alice"))
	}
	for range 2 {
		out, err := e.r.Pass(ctx)
		if err != nil || len(out) != 1 || out[0].Status != StatusSkipped || out[0].Reason != SkipRestored {
			t.Fatalf("pass after restore = %+v, %v; want skipped (%s)", out, err, SkipRestored)
		}
		if !strings.Contains(out[0].Message, res.Backup) {
			t.Errorf("skip message does not name the backup: %q", out[0].Message)
		}
	}
	if string(e.read("alice")) != string(orig) {
		t.Fatal("a pass touched the restored file")
	}
	if dr, err := e.r.Condense(ctx, "alice", Options{DryRun: true}); err != nil || dr.Reason != SkipRestored {
		t.Errorf("dry run of a held file = %+v, %v", dr, err)
	}

	// The agent writes: the hold ends and the next pass condenses.
	f, err := os.OpenFile(e.path("alice"), os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString(sectionText(99, 200))
	must(t, err)
	must(t, f.Close())
	out, err := e.r.Pass(ctx)
	if err != nil || out[0].Status != StatusCondensed {
		t.Fatalf("pass after a change = %+v, %v", out, err)
	}
	if e.r.State("alice").Restored != nil {
		t.Error("hold kept after the file changed")
	}

	// A forced condensation of a held file runs and ends the hold.
	e.now = e.now.Add(5e9)
	if _, err := e.r.Restore(ctx, "alice", Latest); err != nil {
		t.Fatal(err)
	}
	if res, err := e.r.Condense(ctx, "alice", Options{Force: true}); err != nil || res.Status != StatusCondensed {
		t.Fatalf("forced condensation of a held file = %+v, %v", res, err)
	}
	if e.r.State("alice").Restored != nil {
		t.Error("hold kept after a forced condensation")
	}
}
