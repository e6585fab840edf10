package palace_test

import (
	"context"
	"testing"

	"github.com/hivemem/hivemem/internal/palace"
)

// BenchmarkRemineUnchanged128K is the cost of mining a 128 KiB file that
// has not changed since the last mine: one read and one hash.
func BenchmarkRemineUnchanged128K(b *testing.B) {
	f := newFixture(b, nil)
	content, _ := bigFile(128 << 10)
	path := f.write("big", content)
	ctx := context.Background()
	if _, err := f.p.Mine(ctx, path, palace.MineOptions{}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rep, err := f.p.Mine(ctx, path, palace.MineOptions{})
		if err != nil || rep.Unchanged != 1 {
			b.Fatal(rep, err)
		}
	}
}
