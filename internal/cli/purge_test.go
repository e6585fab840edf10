package cli

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/purge"
)

// holdingBytes lists the files under root whose raw bytes contain any of
// needles: every file, the index (palace.db, its write-ahead log) and
// set-aside indexes included.
func holdingBytes(t *testing.T, root string, needles ...string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, n := range needles {
			if bytes.Contains(b, []byte(n)) {
				rel, _ := filepath.Rel(root, p)
				out = append(out, rel+" ("+n+")")
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// seedSecret puts secret in alice's and bob's memory files, alice's
// archive, a backup, the event log and carol's sessions, each written by
// the command that writes it.
func seedSecret(t *testing.T, h *procHome, i int, secret string) {
	t.Helper()
	chat := filepath.Join(t.TempDir(), fmt.Sprintf("chat-%02d.jsonl", i))
	if err := os.WriteFile(chat, []byte(`{"role":"user","content":"here is `+secret+` for the deploy"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fact := fmt.Sprintf("Trial %02d key is %s", i, secret)
	for _, args := range [][]string{
		{"remember", "alice", "Billing key " + secret + " pasted by mistake.", "--heading", fmt.Sprintf("key %02d", i), "--keep-secrets"},
		{"remember", "bob", fmt.Sprintf("Trial %02d: bob saw %s too.", i, secret), "--keep-secrets"},
		{"pin", "alice", fact, "--keep-secrets"},
		{"unpin", "alice", fact},
		{"import", "generic", chat, "--agent", "carol"},
	} {
		var out, errOut bytes.Buffer
		if code := Main(context.Background(), append([]string{"--home", h.root}, args...), strings.NewReader(""), &out, &errOut); code != 0 {
			t.Fatalf("%s: exit %d: %s", args[0], code, errOut.String())
		}
	}
}

// TestPurgeKilledIsFinished: `hivemem purge` processes are SIGKILLed at
// random moments (seeded); after each kill the next command that opens
// the home finishes a purge that was recorded, and one more purge leaves
// no byte of the secret in any file of the home — memory files, sessions,
// archive, backups, event log, palace.db, its write-ahead log and the
// full-text index's segments (a word of the secret, as FTS5 keeps it).
func TestPurgeKilledIsFinished(t *testing.T) {
	h := newProcHome(t)
	seed := uint64(20261206)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	trials := 22
	if raceBuild() {
		trials = 4
	}
	letters := "abcdefghijklmnopqrstuvwxyz"
	var life time.Duration
	var words []string
	killedMidway, finishedByOpen := 0, 0
	for i := range trials {
		// A word no other word of the index starts like, so that FTS5's
		// prefix compression keeps most of it as it is: ends in digits
		// so that the stemmer leaves it alone.
		var w []byte
		for range 14 {
			w = append(w, letters[rng.IntN(len(letters))])
		}
		word := string(w) + fmt.Sprintf("%02d", i)
		secret := "sk-live-" + word
		words = append(words, word)
		needles := []string{secret, word[3:]}
		seedSecret(t, h, i, secret)
		if len(holdingBytes(t, h.root, secret)) < 6 {
			t.Fatalf("trial %d: the secret is only in %v", i, holdingBytes(t, h.root, secret))
		}

		cmd := h.cmd("purge", secret, "--yes")
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		start := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if i > 0 { // the first purge runs whole: how long one lives
			time.Sleep(time.Duration(rng.Int64N(int64(life) * 6 / 5)))
			_ = cmd.Process.Signal(syscall.SIGKILL)
		}
		err := cmd.Wait()
		if i == 0 {
			if err != nil {
				t.Fatalf("purge: %v: %s", err, errOut.String())
			}
			life = time.Since(start)
		}
		if err != nil && cmd.ProcessState.Exited() {
			t.Fatalf("trial %d: purge failed on its own: %v: %s", i, err, errOut.String())
		}
		if err != nil && purge.Pending(filepath.Join(h.root, "palace")) {
			killedMidway++
			// Recorded, not finished: any command that opens the home
			// finishes it.
			if code, _, errOut := h.run("status"); code != 0 {
				t.Fatalf("trial %d: status: exit %d: %s", i, code, errOut)
			}
			if left := holdingBytes(t, h.root, needles...); len(left) > 0 {
				t.Errorf("trial %d: after a kill and `status` the secret is still in %v", i, left)
			} else {
				finishedByOpen++
			}
		}
		if code, _, errOut := h.run("purge", secret, "--yes"); code != 0 {
			t.Fatalf("trial %d: the purge after the kill: exit %d: %s", i, code, errOut)
		}
		if left := holdingBytes(t, h.root, needles...); len(left) > 0 {
			t.Errorf("trial %d: after one more purge the secret is still in %v", i, left)
		}
	}
	t.Logf("seed %d, a purge lives about %s; %d of %d kills landed after the purge was recorded and before it was done, each finished by the next command",
		seed, life.Round(time.Millisecond), killedMidway, trials-1)

	// The full-text index keeps no word of any secret: not as a term of
	// its vocabulary, not in its segments (the raw bytes above).
	db, err := sql.Open("sqlite", "file:"+filepath.Join(h.root, "palace", "palace.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, w := range words {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM drawers_vocab WHERE term = ?`, w).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			t.Errorf("the full-text index still has the word %q", w)
		}
	}
	// The rest of the memory stays.
	data, err := os.ReadFile(filepath.Join(h.root, "hive", "agents", "bob", "memory.md"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range trials {
		if line := fmt.Sprintf("\nTrial %02d: bob saw %s too.\n", i, purge.Marker); !strings.Contains(string(data), line) {
			t.Errorf("bob's note %d is not kept with the secret purged:\n%s", i, data)
		}
	}
}

// An import of a transcript that still holds a purged text writes it
// redacted and says that the transcript itself is not ours to change; a
// purge of a too-short text is refused and its dry run changes nothing.
func TestPurgeCommandAndImportNote(t *testing.T) {
	h := newProcHome(t)
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := Main(context.Background(), append([]string{"--home", h.root}, args...), strings.NewReader(""), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	secret := "sk-live-NOTE-90817"
	if code, _, errOut := run("remember", "alice", "Key "+secret+" pasted.", "--keep-secrets"); code != 0 {
		t.Fatal(errOut)
	}
	if code, _, errOut := run("purge", "the", "--yes"); code == 0 || !strings.Contains(errOut, "too short") {
		t.Errorf("purge of a short text: exit %d: %s", code, errOut)
	}
	code, out, errOut := run("purge", secret, "--dry-run")
	if code != 0 || !strings.Contains(out, "would purge from 2 places: 1 file (the files of 1 agent) and 1 drawer") || strings.Contains(out+errOut, secret) {
		t.Errorf("dry run: exit %d:\n%s%s", code, out, errOut)
	}
	if code, _, errOut := run("purge", secret); code == 0 || !strings.Contains(errOut, "not confirmed") {
		t.Errorf("unconfirmed purge: exit %d: %s", code, errOut)
	}
	if len(holdingBytes(t, h.root, secret)) == 0 {
		t.Fatal("a dry run or an unconfirmed purge changed the home")
	}
	code, out, errOut = run("purge", secret, "--yes")
	if code != 0 || !strings.Contains(out, "purged from") || strings.Contains(out+errOut, secret) {
		t.Errorf("purge: exit %d:\n%s%s", code, out, errOut)
	}
	chat := filepath.Join(t.TempDir(), "chat.jsonl")
	if err := os.WriteFile(chat, []byte(`{"role":"user","content":"again `+secret+`"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = run("import", "generic", chat, "--agent", "alice")
	if code != 0 || !strings.Contains(errOut, "the source transcript outside the home is not ours to change") {
		t.Errorf("import: exit %d: %s", code, errOut)
	}
	if left := holdingBytes(t, h.root, secret); len(left) > 0 {
		t.Errorf("the import brought the secret back: %v", left)
	}
}
