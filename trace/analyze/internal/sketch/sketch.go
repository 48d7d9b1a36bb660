// Package sketch keeps the distribution of non-negative integer values
// (milliseconds) in bounded memory.
//
// A Dist stores values exactly until it holds ExactLimit of them; after that
// it folds them into DDSketch-style logarithmic buckets whose quantiles have
// at most 1 % relative error. Count, total and max are always exact.
// Quantiles use the nearest-rank definition: the q-quantile of n values is
// the value of rank ceil(q·n) in sorted order (rank 1 for q·n ≤ 1).
package sketch

import (
	"math"
	"slices"
	"sync"
)

// ExactLimit is how many values a Dist keeps exactly before it switches to buckets.
const ExactLimit = 4096

// RelativeError is the bucket sketch's relative accuracy.
const RelativeError = 0.01

var (
	gamma    = (1 + RelativeError) / (1 - RelativeError)
	logGamma = math.Log(gamma)
)

// Dist is a distribution of non-negative values. The zero value is empty and
// ready to use.
type Dist struct {
	count, total, max int64
	exact             []int64
	sketched          bool
	zeros             int64
	offset            int // bucket index of buckets[0]
	buckets           []int64
}

// Add records v; negative values count as 0.
func (d *Dist) Add(v int64) {
	if v < 0 {
		v = 0
	}
	d.count++
	d.total = satAdd(d.total, v)
	if v > d.max || d.count == 1 {
		d.max = v
	}
	if !d.sketched {
		d.exact = append(d.exact, v)
		if len(d.exact) > ExactLimit {
			d.toSketch()
		}
		return
	}
	d.addBucket(v, 1)
}

func (d *Dist) toSketch() {
	d.sketched = true
	for _, v := range d.exact {
		d.addBucket(v, 1)
	}
	d.exact = nil
}

// bucketOf is the index of v's bucket: ceil(log_gamma(v)), for v >= 1.
// Most values are milliseconds below a minute: those are looked up in a
// table built (once, on first use, with the same formula) instead of
// calling math.Log for every value.
func bucketOf(v int64) int {
	if v < smallValues {
		smallOnce.Do(buildSmall)
		return int(smallBuckets[v])
	}
	return logBucket(v)
}

func logBucket(v int64) int { return int(math.Ceil(math.Log(float64(v)) / logGamma)) }

// smallValues bounds the lookup table of bucketOf (128 KiB of int16:
// ceil(log_gamma(65535)) is 555).
const smallValues = 1 << 16

var (
	smallOnce    sync.Once
	smallBuckets *[smallValues]int16
)

func buildSmall() {
	t := new([smallValues]int16)
	for v := int64(1); v < smallValues; v++ {
		t[v] = int16(logBucket(v))
	}
	smallBuckets = t
}

func (d *Dist) addBucket(v, n int64) {
	if v == 0 {
		d.zeros += n
		return
	}
	d.addIndex(bucketOf(v), n)
}

func (d *Dist) addIndex(k int, n int64) {
	if len(d.buckets) == 0 {
		d.offset = k
		d.buckets = append(d.buckets, 0)
	}
	if k < d.offset {
		grow := d.offset - k
		d.buckets = append(make([]int64, grow, grow+len(d.buckets)), d.buckets...)
		d.offset = k
	}
	for k-d.offset >= len(d.buckets) {
		d.buckets = append(d.buckets, 0)
	}
	d.buckets[k-d.offset] += n
}

// Merge adds every value of o to d.
func (d *Dist) Merge(o *Dist) {
	if o.count == 0 {
		return
	}
	if d.count == 0 || o.max > d.max {
		d.max = o.max
	}
	d.count += o.count
	d.total = satAdd(d.total, o.total)
	if !d.sketched && !o.sketched && len(d.exact)+len(o.exact) <= ExactLimit {
		d.exact = append(d.exact, o.exact...)
		return
	}
	if !d.sketched {
		d.toSketch()
	}
	if !o.sketched {
		for _, v := range o.exact {
			d.addBucket(v, 1)
		}
		return
	}
	d.zeros += o.zeros
	for i, n := range o.buckets {
		if n != 0 {
			d.addIndex(o.offset+i, n)
		}
	}
}

// satAdd returns a+b for non-negative a and b, saturating at math.MaxInt64.
func satAdd(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// Count returns how many values were added.
func (d *Dist) Count() int64 { return d.count }

// Total returns the exact sum of the values (math.MaxInt64 if it would overflow).
func (d *Dist) Total() int64 { return d.total }

// Max returns the exact largest value, 0 if empty.
func (d *Dist) Max() int64 { return d.max }

// Exact reports whether quantiles are exact.
func (d *Dist) Exact() bool { return !d.sketched }

// Quantile returns the nearest-rank q-quantile (0 ≤ q ≤ 1), 0 if empty.
// Once sketched, the result is within 1 % of the true value, and never
// above Max.
func (d *Dist) Quantile(q float64) int64 {
	if d.count == 0 {
		return 0
	}
	rank := int64(math.Ceil(q * float64(d.count)))
	if rank < 1 {
		rank = 1
	}
	if rank > d.count {
		rank = d.count
	}
	if !d.sketched {
		s := slices.Clone(d.exact)
		slices.Sort(s)
		return s[rank-1]
	}
	seen := d.zeros
	if rank <= seen {
		return 0
	}
	for i, n := range d.buckets {
		seen += n
		if rank <= seen {
			k := d.offset + i
			v := int64(math.Round(2 * math.Pow(gamma, float64(k)) / (gamma + 1)))
			return min(v, d.max)
		}
	}
	return d.max
}

// record counts v (non-negative) and keeps it if d is still exact; it
// reports whether v must still go to a bucket.
func (d *Dist) record(v int64) bool {
	d.count++
	d.total = satAdd(d.total, v)
	if v > d.max || d.count == 1 {
		d.max = v
	}
	if !d.sketched {
		d.exact = append(d.exact, v)
		if len(d.exact) > ExactLimit {
			d.toSketch()
		}
		return false
	}
	if v == 0 {
		d.zeros++
		return false
	}
	return true
}

// AddBoth records v in d and in e, as d.Add(v); e.Add(v) would, computing
// its bucket (a logarithm) once.
func AddBoth(d, e *Dist, v int64) {
	if v < 0 {
		v = 0
	}
	nd, ne := d.record(v), e.record(v)
	if nd || ne {
		k := bucketOf(v)
		if nd {
			d.addIndex(k, 1)
		}
		if ne {
			e.addIndex(k, 1)
		}
	}
}
