package cli

import (
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/app"
)

func TestProgressLineShowsRateAndTimeLeft(t *testing.T) {
	tests := []struct {
		name    string
		p       app.MineProgress
		elapsed time.Duration
		want    string
	}{
		{"too early for a rate", app.MineProgress{Files: 10, FilesDone: 1, Embedded: 50}, 500 * time.Millisecond,
			"mining: 1/10 files, 50 drawers embedded"},
		{"rate and time left", app.MineProgress{Files: 10, FilesDone: 2, Embedded: 300}, 10 * time.Second,
			"mining: 2/10 files, 300 drawers embedded (30/s), about 40s left"},
		{"minutes left", app.MineProgress{Files: 100, FilesDone: 10, Embedded: 1000}, 20 * time.Second,
			"mining: 10/100 files, 1,000 drawers embedded (50/s), about 3m00s left"},
		{"hours left", app.MineProgress{Files: 1000, FilesDone: 1, Embedded: 40}, 10 * time.Second,
			"mining: 1/1,000 files, 40 drawers embedded (4/s), about 2h47m left"},
		{"no file done yet", app.MineProgress{Files: 3, Embedded: 64}, 4 * time.Second,
			"mining: 0/3 files, 64 drawers embedded (16/s)"},
		{"all files done", app.MineProgress{Files: 3, FilesDone: 3, Embedded: 9}, 3 * time.Second,
			"mining: 3/3 files, 9 drawers embedded (3/s)"},
		{"nothing embedded", app.MineProgress{Files: 4, FilesDone: 2}, 2 * time.Second,
			"mining: 2/4 files, 0 drawers embedded, about 2s left"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := progressLine("mining", tc.p, tc.elapsed); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}
