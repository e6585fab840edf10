package quantile

import "testing"

func TestNearestRank(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	for _, tc := range []struct {
		xs   []float64
		p    float64
		want float64
	}{
		{nil, 50, 0},
		{[]float64{7}, 99, 7},
		{xs, 0, 1},
		{xs, 10, 1},
		{xs, 11, 2},
		{xs, 50, 5},
		{xs, 95, 10},
		{xs, 100, 10},
		{[]float64{1, 2, 3}, 50, 2},
	} {
		if got := NearestRank(tc.xs, tc.p); got != tc.want {
			t.Errorf("NearestRank(%v, %v) = %v, want %v", tc.xs, tc.p, got, tc.want)
		}
	}
	if xs[0] != 5 {
		t.Error("NearestRank sorted its argument")
	}
}
