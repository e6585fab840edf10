package modelfetch

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRecordedFailureHoldsOffAFetchUntilClearedOrOld(t *testing.T) {
	tests := []struct {
		name   string
		record bool
		age    time.Duration // how long ago the failure was
		clear  bool
		within time.Duration
		want   bool
	}{
		{name: "no failure recorded", within: time.Hour, want: false},
		{name: "a recent failure", record: true, within: time.Hour, want: true},
		{name: "a failure older than the wait", record: true, age: 2 * time.Hour, within: time.Hour, want: false},
		{name: "a failure cleared by a fetch that worked", record: true, clear: true, within: time.Hour, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "all-MiniLM-L6-v2")
			if tt.record {
				if err := RecordFailure(dir, errors.New("registry\nunreachable")); err != nil {
					t.Fatal(err)
				}
				b, err := os.ReadFile(FailureMarker(dir))
				if err != nil || !strings.HasSuffix(string(b), " registry unreachable\n") {
					t.Fatalf("marker = %q, %v; want the time and the error on one line", b, err)
				}
				if tt.age > 0 {
					old := time.Now().Add(-tt.age)
					if err := os.Chtimes(FailureMarker(dir), old, old); err != nil {
						t.Fatal(err)
					}
				}
			}
			if tt.clear {
				if err := ClearFailure(dir); err != nil {
					t.Fatal(err)
				}
			}
			if got := FailedWithin(dir, tt.within); got != tt.want {
				t.Errorf("FailedWithin = %v, want %v", got, tt.want)
			}
			if err := ClearFailure(dir); err != nil {
				t.Errorf("ClearFailure with nothing to clear: %v", err)
			}
		})
	}
}
