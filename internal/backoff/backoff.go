// Package backoff computes the exponential waits hivemem uses after
// repeated failures (mining, condensing), so no failure turns into a retry
// storm.
package backoff

import "time"

// Doubling is the wait after n consecutive failures: first, then doubled
// for each further failure, capped at limit. Zero failures wait nothing.
func Doubling(first, limit time.Duration, n int) time.Duration {
	if n <= 0 {
		return 0
	}
	d := first
	for i := 1; i < n && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}
