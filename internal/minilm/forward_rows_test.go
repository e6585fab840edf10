package minilm

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestForwardRowsMatchesForward checks that sharing a pass out by rows
// (forwardRows) gives each text the vector the one-goroutine pass gives,
// to the bit, for 2 and 3 workers, one text or several, rows split inside
// a text or between texts, and a worker left with no rows.
func TestForwardRowsMatchesForward(t *testing.T) {
	tm := newTinyModel(t, "F16")
	m, err := Load(tm.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, texts := range [][]string{
		{strings.Repeat("cat dog ", 20)},
		{"hello world", strings.Repeat("a cat, a doggy ", 9), "zebra", ""},
		{"hello"},
	} {
		seqs := make([][]int32, len(texts))
		for i, s := range texts {
			seqs[i] = m.tok.encode32(s)
		}
		want := make([][]float32, len(texts))
		if err := m.forward(context.Background(), seqs, want, 1); err != nil {
			t.Fatal(err)
		}
		for _, workers := range []int{2, 3} {
			got := make([][]float32, len(texts))
			if err := m.forwardRows(context.Background(), seqs, got, workers); err != nil {
				t.Fatal(err)
			}
			for i := range want {
				for j := range want[i] {
					if got[i][j] != want[i][j] {
						t.Fatalf("%d workers, text %d: element %d = %v, want %v", workers, i, j, got[i][j], want[i][j])
					}
				}
			}
		}
	}
}

// TestForwardRowsCancelled checks that a cancelled pass stops every worker
// and reports the cancellation.
func TestForwardRowsCancelled(t *testing.T) {
	tm := newTinyModel(t, "F32")
	m, err := Load(tm.dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	seqs := [][]int32{m.tok.encode32(strings.Repeat("cat dog ", 20))}
	if err := m.forwardRows(ctx, seqs, make([][]float32, 1), 2); !errors.Is(err, context.Canceled) {
		t.Fatalf("forwardRows after cancel: %v, want context.Canceled", err)
	}
}
