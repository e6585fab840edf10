package cli

// The index is disposable — "always rebuildable from
// hive/" — so `hivemem reindex` must rebuild it whatever state palace.db
// is in, and every command must fail with a clear error, not a panic.

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/filetest"
)

func TestReindexRecoversDamagedPalace(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, db string)
	}{
		{"zero bytes", func(t *testing.T, db string) { filetest.Truncate(t, db, 0) }},
		{"junk over the header", func(t *testing.T, db string) {
			filetest.WriteAt(t, db, 0, []byte(strings.Repeat("junk", 64)))
		}},
		{"truncated to a third", func(t *testing.T, db string) { filetest.Truncate(t, db, filetest.Size(t, db)/3) }},
		{"junk in the middle", func(t *testing.T, db string) {
			filetest.WriteAt(t, db, 8192, []byte(strings.Repeat("\xff\x00junk", int(filetest.Size(t, db))/12)))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newProcHome(t)
			var b strings.Builder
			b.WriteString("# Memory — alice (alice)\n\n")
			for i := range 60 {
				fmt.Fprintf(&b, "## 2026-11-%02d — note %d\nrebuildmark%03d %s\n", i%28+1, i, i, strings.Repeat("filler words ", 30))
			}
			filetest.Write(t, h.mem, b.String())
			if code, out, errOut := h.run("mine"); code != 0 {
				t.Fatalf("mine: %d %s %s", code, out, errOut)
			}
			db := filepath.Join(h.root, "palace", "palace.db")
			tc.damage(t, db)

			// Commands on the damaged palace: an error naming it, no panic.
			code, out, errOut := h.run("search", "rebuildmark007")
			if strings.Contains(errOut, "panic") || strings.Contains(errOut, "goroutine ") {
				t.Fatalf("search on a damaged palace panicked:\n%s", errOut)
			}
			t.Logf("search on the damaged palace: exit %d, %q %q", code, strings.TrimSpace(out), strings.TrimSpace(errOut))

			code, out, errOut = h.run("reindex")
			if code != 0 {
				t.Fatalf("`hivemem reindex` cannot rebuild a damaged palace (%s): exit %d\n%s%s", tc.name, code, out, errOut)
			}
			for _, q := range []string{"rebuildmark007", "rebuildmark059"} {
				code, out, errOut := h.run("search", "--json", q)
				if code != 0 || !strings.Contains(out, q) {
					t.Errorf("after reindex, search %q: exit %d\n%s%s", q, code, out, errOut)
				}
			}
			if code, out, errOut := h.run("status"); code != 0 {
				t.Errorf("status after reindex: exit %d\n%s%s", code, out, errOut)
			}
		})
	}
}
