package backoff

import (
	"testing"
	"time"
)

func TestDoubling(t *testing.T) {
	cases := []struct {
		n    int
		want time.Duration
	}{
		{-1, 0}, {0, 0}, {1, time.Minute}, {2, 2 * time.Minute}, {3, 4 * time.Minute},
		{9, 256 * time.Minute}, {10, 6 * time.Hour}, {1000, 6 * time.Hour},
	}
	for _, c := range cases {
		if got := Doubling(time.Minute, 6*time.Hour, c.n); got != c.want {
			t.Errorf("Doubling(1m, 6h, %d) = %v, want %v", c.n, got, c.want)
		}
	}
}
