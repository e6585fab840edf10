package sqlite

import (
	"path/filepath"
	"testing"

	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/store/storetest"
)

// TestModelChangeByAnotherProcess: two processes on one palace file, one
// switching the embedding model under the other.
func TestModelChangeByAnotherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "palace.db")
	storetest.ModelChangeByAnotherProcess(t, func(t *testing.T) store.Store {
		s, err := Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}
