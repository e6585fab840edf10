package memory_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/hometest"
	"github.com/hivemem/hivemem/internal/memfile"
	"github.com/hivemem/hivemem/internal/memory"
)

// TestCreateMakesTheFileFromTheTemplateOnce: Create makes a new agent's
// memory file from the template with its display name (the id when none
// is given) and leaves an existing file as it is.
func TestCreateMakesTheFileFromTheTemplateOnce(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ name, want string }{
		{"Alice Liddell", string(memfile.Template("alice", "Alice Liddell"))},
		{"", string(memfile.Template("alice", "alice"))},
	} {
		h := hometest.New(t)
		path, created, err := memory.Create(ctx, h, "alice", c.name)
		if err != nil || !created {
			t.Fatalf("create %q: created %v, %v", c.name, created, err)
		}
		if got, _ := os.ReadFile(path); string(got) != c.want {
			t.Errorf("create %q wrote\n%s\nwant\n%s", c.name, got, c.want)
		}
		if _, err := memory.Remember(ctx, h, "alice", "", "the zebra protocol works", time.Now()); err != nil {
			t.Fatal(err)
		}
		before, _ := os.ReadFile(path)
		again, created, err := memory.Create(ctx, h, "alice", "Other")
		if err != nil || created || again != path {
			t.Fatalf("second create: %s, created %v, %v", again, created, err)
		}
		if after, _ := os.ReadFile(path); string(after) != string(before) {
			t.Errorf("an existing file changed:\n%s", after)
		}
	}
}
