// Package quantile computes the percentiles the benchmarks report, one
// definition for all of them so their figures compare.
package quantile

import (
	"math"
	"slices"
)

// NearestRank is the p-th percentile of xs by the nearest-rank method (the
// smallest value with at least p % of xs at or below it): 0 for no values.
// xs is not changed.
func NearestRank(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}
