package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/hivemem/hivemem/internal/app"
)

// mineProgress returns ctx carrying a progress bar on stderr for the
// mining done under it (files mined of those found, drawers embedded so
// far, so that a long embedding moves too, the embedding rate and an
// estimate of the time left), and the function that clears it. Only on a
// terminal, and not with quiet (--json): otherwise the command's own
// summary line is all there is.
func (g *globals) mineProgress(ctx context.Context, what string, quiet bool) (context.Context, func()) {
	if quiet || !isTerminal(g.stderr) {
		return ctx, func() {}
	}
	// A spinner, not a bar: how many drawers need embedding is known only
	// file by file, and the vectors missing from earlier mines are filled
	// after the last file.
	var bar *progressbar.ProgressBar
	start := time.Now()
	ctx = app.WithMineProgress(ctx, func(p app.MineProgress) {
		if bar == nil {
			// No throttle: it could drop the last update (the vectors
			// filled after the last file); updates come at most once a
			// file or a batch of drawers embedded.
			bar = progressbar.NewOptions(-1, progressbar.OptionSetWriter(g.stderr), progressbar.OptionClearOnFinish())
		}
		bar.Describe(progressLine(what, p, time.Since(start)))
	})
	return ctx, func() {
		if bar != nil {
			_ = bar.Finish()
		}
	}
}

// progressLine describes mining progress after elapsed: files mined of
// those found, drawers embedded and their rate, and the time left at the
// rate files have been mined so far (once there is a rate to go by).
func progressLine(what string, p app.MineProgress, elapsed time.Duration) string {
	line := fmt.Sprintf("%s: %d/%s, %s embedded", what, p.FilesDone, plural(p.Files, "file"), plural(p.Embedded, "drawer"))
	secs := elapsed.Seconds()
	if secs < 1 {
		return line
	}
	if p.Embedded > 0 {
		line += fmt.Sprintf(" (%.0f/s)", float64(p.Embedded)/secs)
	}
	if p.FilesDone > 0 && p.Files > p.FilesDone {
		left := time.Duration(float64(elapsed) * float64(p.Files-p.FilesDone) / float64(p.FilesDone))
		line += ", about " + roughDuration(left) + " left"
	}
	return line
}

// roughDuration rounds d for a human: seconds under a minute, minutes under
// an hour, then hours and minutes.
func roughDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Round(time.Second).Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	}
	d = d.Round(time.Minute)
	return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
}

// countBar is a terminal progress bar over n steps (nil off a terminal,
// and its methods then do nothing).
type countBar struct{ bar *progressbar.ProgressBar }

func (g *globals) countBar(what string, n int, quiet bool) countBar {
	if quiet || !isTerminal(g.stderr) {
		return countBar{}
	}
	return countBar{progressbar.NewOptions(n, progressbar.OptionSetWriter(g.stderr), progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(), progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())}
}

func (c countBar) set(done, total int) {
	if c.bar == nil {
		return
	}
	if total != c.bar.GetMax() {
		c.bar.ChangeMax(total)
	}
	_ = c.bar.Set(done)
}

func (c countBar) finish() {
	if c.bar != nil {
		_ = c.bar.Finish()
	}
}
