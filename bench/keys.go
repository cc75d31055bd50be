package bench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
)

// Distribution chooses which existing record an operation touches, as YCSB's
// requestdistribution does.
type Distribution string

// The key distributions.
const (
	// Uniform: every record is equally likely.
	Uniform Distribution = "uniform"
	// Zipfian: a few records are hot; popularity follows a Zipf law of constant
	// ZipfianConstant, scattered over the key space by a hash (YCSB's scrambled zipfian).
	Zipfian Distribution = "zipfian"
	// Latest: the most recently inserted records are the hottest (a Zipf law over recency).
	Latest Distribution = "latest"
)

// Distributions lists every distribution, in report order.
func Distributions() []Distribution { return []Distribution{Uniform, Zipfian, Latest} }

// ZipfianConstant is the skew of Zipfian and Latest, YCSB's default.
const ZipfianConstant = 0.99

// chooser picks an index in [0, n) for a key space of n records. Each worker owns its
// chooser: choosers are not safe for concurrent use.
type chooser interface {
	next(r *rand.Rand, n int64) int64
}

func newChooser(d Distribution) (chooser, error) {
	switch d {
	case Uniform:
		return uniformChooser{}, nil
	case Zipfian:
		return &scrambledChooser{z: zipf{theta: ZipfianConstant}}, nil
	case Latest:
		return &latestChooser{z: zipf{theta: ZipfianConstant}}, nil
	}
	return nil, fmt.Errorf("unknown key distribution %q (want uniform, zipfian or latest)", d)
}

type uniformChooser struct{}

func (uniformChooser) next(r *rand.Rand, n int64) int64 { return r.Int64N(max(n, 1)) }

// zipf draws ranks in [0, n) with P(rank i) proportional to 1/(i+1)^theta, by the
// rejection-free method of Gray et al., "Quickly Generating Billion-Record Synthetic
// Databases" (SIGMOD 1994). zeta(n) is extended incrementally when n grows.
type zipf struct {
	theta      float64
	n          int64
	zetaN      float64
	zeta2      float64
	alpha, eta float64
}

func (z *zipf) grow(n int64) {
	if z.n == 0 {
		z.zeta2 = 1 + math.Pow(0.5, z.theta)
		z.alpha = 1 / (1 - z.theta)
	}
	for i := z.n + 1; i <= n; i++ {
		z.zetaN += 1 / math.Pow(float64(i), z.theta)
	}
	z.n = n
	z.eta = (1 - math.Pow(2/float64(n), 1-z.theta)) / (1 - z.zeta2/z.zetaN)
}

func (z *zipf) rank(r *rand.Rand, n int64) int64 {
	if n <= 1 {
		return 0
	}
	if n != z.n {
		if n < z.n {
			*z = zipf{theta: z.theta}
		}
		z.grow(n)
	}
	u := r.Float64()
	uz := u * z.zetaN
	switch {
	case uz < 1:
		return 0
	case uz < 1+math.Pow(0.5, z.theta):
		return 1
	}
	v := int64(float64(n) * math.Pow(z.eta*u-z.eta+1, z.alpha))
	return min(max(v, 0), n-1)
}

type scrambledChooser struct{ z zipf }

func (c *scrambledChooser) next(r *rand.Rand, n int64) int64 {
	return int64(fnv64(uint64(c.z.rank(r, n))) % uint64(max(n, 1)))
}

type latestChooser struct{ z zipf }

func (c *latestChooser) next(r *rand.Rand, n int64) int64 {
	return max(n, 1) - 1 - c.z.rank(r, n)
}

// fnv64 is FNV-1a over the eight bytes of v: it scatters ranks and record numbers over the
// key space.
func fnv64(v uint64) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < 8; i++ {
		h ^= v & 0xff
		h *= 1099511628211
		v >>= 8
	}
	return h
}

// ackCounter hands out record numbers for inserts and tracks the highest number below which
// every insert has been acknowledged, so that reads only choose records that exist (YCSB's
// acknowledged counter).
type ackCounter struct {
	mu      sync.Mutex
	next    int64
	limit   int64 // every record below limit exists
	pending map[int64]bool
}

func newAckCounter(loaded int64) *ackCounter {
	return &ackCounter{next: loaded, limit: loaded, pending: map[int64]bool{}}
}

// reserve returns the number of the next record to insert.
func (c *ackCounter) reserve() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.next
	c.next++
	return n
}

// ack marks record n as inserted (or abandoned: a failed insert is acknowledged too, and
// reads of it count as errors).
func (c *ackCounter) ack(n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending[n] = true
	for c.pending[c.limit] {
		delete(c.pending, c.limit)
		c.limit++
	}
}

// readable returns how many records reads may choose from.
func (c *ackCounter) readable() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.limit
}
