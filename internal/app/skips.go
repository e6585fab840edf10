package app

import (
	"slices"
	"strings"
	"sync"

	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/palace"
)

// skipLog is the files skipped by a mine that the app's log has told of,
// by path, with the reason it gave (see reportSkips).
type skipLog struct {
	mu    sync.Mutex
	skips map[string]string
}

// reportSkips logs the skips of a mine of path that the log has not told
// of yet, or with another kind of reason (skipKind), and remembers them.
// With complete (the mine went through), a file under path that was
// logged as skipped and is not any more is logged once as such and
// forgotten.
func (a *App) reportSkips(path string, skipped []palace.Skip, complete bool) {
	type line struct {
		path, reason string
	}
	var news []line
	var gone []string
	l := &a.skipped
	l.mu.Lock()
	if l.skips == nil {
		l.skips = map[string]string{}
	}
	now := make(map[string]bool, len(skipped))
	for _, s := range skipped {
		now[s.Path] = true
		if r, ok := l.skips[s.Path]; !ok || skipKind(r) != skipKind(s.Reason) {
			news = append(news, line{s.Path, s.Reason})
		}
		l.skips[s.Path] = s.Reason
	}
	if complete {
		for p := range l.skips {
			if !now[p] && home.Under(p, path) {
				delete(l.skips, p)
				gone = append(gone, p)
			}
		}
	}
	l.mu.Unlock()
	for _, s := range news {
		a.log.Warn("mine: skipping file", "path", s.path, "reason", s.reason)
	}
	slices.Sort(gone)
	for _, p := range gone {
		a.log.Info("mine: no longer skipping file", "path", p)
	}
}

// skipKind is what a skip's reason says is wrong, without its detail: the
// text before a colon ("too large: 1078 bytes, the limit is 1000 ..."),
// so that a file too large that grows by a note at every remember is told
// of once, not at every write.
func skipKind(reason string) string {
	kind, _, _ := strings.Cut(reason, ":")
	return kind
}
