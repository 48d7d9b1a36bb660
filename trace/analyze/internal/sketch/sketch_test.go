package sketch

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestExactNearestRank(t *testing.T) {
	var d Dist
	for _, v := range []int64{5, 1, 4, 2, 3} {
		d.Add(v)
	}
	tests := []struct {
		q    float64
		want int64
	}{{0, 1}, {0.2, 1}, {0.5, 3}, {0.9, 5}, {0.99, 5}, {1, 5}}
	for _, tt := range tests {
		if got := d.Quantile(tt.q); got != tt.want {
			t.Errorf("Quantile(%v) = %d, want %d", tt.q, got, tt.want)
		}
	}
	if d.Count() != 5 || d.Total() != 15 || d.Max() != 5 || !d.Exact() {
		t.Errorf("count/total/max/exact = %d/%d/%d/%v", d.Count(), d.Total(), d.Max(), d.Exact())
	}
	var empty Dist
	if empty.Quantile(0.5) != 0 || empty.Max() != 0 {
		t.Error("empty Dist must report 0")
	}
}

func TestSketchRelativeError(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var parts [4]Dist
	var all []int64
	for i := 0; i < 200_000; i++ {
		v := int64(math.Exp(r.Float64()*12)) - 1 // 0 .. ~160000, heavy tail
		all = append(all, v)
		parts[i%4].Add(v)
	}
	var d Dist
	for i := range parts {
		d.Merge(&parts[i])
	}
	slices.Sort(all)
	if d.Exact() {
		t.Fatal("expected a sketched Dist")
	}
	if d.Count() != int64(len(all)) || d.Max() != all[len(all)-1] {
		t.Fatalf("count/max = %d/%d", d.Count(), d.Max())
	}
	for _, q := range []float64{0.01, 0.5, 0.9, 0.99, 0.999} {
		want := all[int(math.Ceil(q*float64(len(all))))-1]
		got := d.Quantile(q)
		if want == 0 {
			if got != 0 {
				t.Errorf("q=%v: got %d want 0", q, got)
			}
			continue
		}
		// 1% relative error plus rounding to whole milliseconds.
		if rel := math.Abs(float64(got-want)) / float64(want); rel > RelativeError && math.Abs(float64(got-want)) > 1 {
			t.Errorf("q=%v: got %d want %d (rel err %.4f)", q, got, want, rel)
		}
	}
}

// TestTotalSaturates is a regression test: the total of huge values wrapped
// round to a negative number.
func TestTotalSaturates(t *testing.T) {
	var a, b Dist
	a.Add(math.MaxInt64 - 1)
	a.Add(2)
	b.Add(math.MaxInt64)
	a.Merge(&b)
	if a.Total() != math.MaxInt64 || a.Count() != 3 || a.Max() != math.MaxInt64 {
		t.Errorf("count/total/max = %d/%d/%d, want 3/MaxInt64/MaxInt64", a.Count(), a.Total(), a.Max())
	}
}

// TestAddBoth: AddBoth gives the same two distributions as two Adds, exact
// and sketched, whatever their sizes.
func TestAddBoth(t *testing.T) {
	var a, b, c, d Dist
	for i := range 3 * ExactLimit {
		v := int64(i*7919%100000) - 5
		a.Add(v)
		if i%3 == 0 {
			AddBoth(&c, &d, v)
			b.Add(v)
		} else {
			c.Add(v)
		}
	}
	for _, q := range []float64{0, 0.5, 0.9, 0.99, 1} {
		if a.Quantile(q) != c.Quantile(q) || b.Quantile(q) != d.Quantile(q) {
			t.Errorf("q %v: %d/%d and %d/%d", q, a.Quantile(q), c.Quantile(q), b.Quantile(q), d.Quantile(q))
		}
	}
	if a.Count() != c.Count() || a.Total() != c.Total() || a.Max() != c.Max() ||
		b.Count() != d.Count() || b.Total() != d.Total() || b.Max() != d.Max() {
		t.Errorf("counts differ: %d %d %d / %d %d %d", a.Count(), a.Total(), a.Max(), c.Count(), c.Total(), c.Max())
	}
}

// The lookup table must give exactly the logarithm's bucket, at every
// small value and across the boundary to computed ones.
func TestBucketTableMatchesFormula(t *testing.T) {
	for v := int64(1); v < smallValues+1000; v++ {
		if got, want := bucketOf(v), logBucket(v); got != want {
			t.Fatalf("bucketOf(%d) = %d, want %d", v, got, want)
		}
	}
}
