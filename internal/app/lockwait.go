package app

import "github.com/hivemem/hivemem/internal/writelock"

// lockWaiter tells fn who holds the palace write lock a write waits for
// (nil for a nil fn: silently).
func lockWaiter(fn func(holder string)) func(writelock.Holder) {
	if fn == nil {
		return nil
	}
	return func(h writelock.Holder) { fn(h.String()) }
}
