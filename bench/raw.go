package bench

import (
	"encoding/base64"
	"fmt"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// RawMeasures is what a meter measured, in a form that merges exactly: per kind of request
// its HdrHistogram and counts, the per-second series and the per-partition tallies. It is
// what a shard writes and `conform bench merge` adds up.
type RawMeasures struct {
	Kinds      []RawKind        `json:"kinds"`
	Series     []Second         `json:"per_second"`
	Partitions []PartitionTally `json:"partitions,omitempty"`
	// Steps offered, started late and dropped by a paced or open run (Summary).
	Offered int64 `json:"offered,omitempty"`
	Late    int64 `json:"late,omitempty"`
	Dropped int64 `json:"dropped,omitempty"`
}

// RawKind is one kind of request: its counts and its latency histogram (nanoseconds) in
// HdrHistogram's standard encoded form, V2 compressed and base64 ("HISTFAAA..."), which
// every HdrHistogram implementation reads.
type RawKind struct {
	Kind      string `json:"kind"`
	Requests  int64  `json:"requests"`
	Entities  int64  `json:"entities"`
	Errors    int64  `json:"errors"`
	Throttles int64  `json:"throttles"`
	GaveUp    int64  `json:"gave_up_throttled"`
	Encoded   string `json:"histogram"`
	// IntendedEncoded is the histogram of latencies from the intended start, in paced and
	// open runs (Summary.Intended), encoded as Encoded is.
	IntendedEncoded string `json:"intended_histogram,omitempty"`

	hist     *hdrhistogram.Histogram
	intended *hdrhistogram.Histogram
}

// Histogram returns the kind's latency histogram (an empty one when it has none).
func (k RawKind) Histogram() *hdrhistogram.Histogram {
	if k.hist == nil {
		return newHistogram()
	}
	return k.hist
}

// Encode fills every kind's Encoded from its histogram.
func (r *RawMeasures) Encode() error {
	for i := range r.Kinds {
		k := &r.Kinds[i]
		b, err := k.Histogram().Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			return fmt.Errorf("encode the %s histogram: %w", k.Kind, err)
		}
		k.Encoded = string(b)
		if k.intended != nil {
			b, err := k.intended.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
			if err != nil {
				return fmt.Errorf("encode the %s intended-start histogram: %w", k.Kind, err)
			}
			k.IntendedEncoded = string(b)
		}
	}
	return nil
}

// Decode reads every kind's histogram from its Encoded form and checks that it agrees with
// the kind's request count: a damaged or cut histogram is refused, never read in part.
func (r *RawMeasures) Decode() error {
	for i := range r.Kinds {
		k := &r.Kinds[i]
		h, err := decodeHistogram(k.Encoded)
		if err != nil {
			return fmt.Errorf("the %s histogram: %w", k.Kind, err)
		}
		if h.TotalCount() != k.Requests {
			return fmt.Errorf("the %s histogram holds %d requests, its count says %d", k.Kind, h.TotalCount(), k.Requests)
		}
		k.hist = h
		if k.IntendedEncoded != "" {
			h, err := decodeHistogram(k.IntendedEncoded)
			if err != nil {
				return fmt.Errorf("the %s intended-start histogram: %w", k.Kind, err)
			}
			if h.TotalCount() != k.Requests {
				return fmt.Errorf("the %s intended-start histogram holds %d requests, its count says %d", k.Kind, h.TotalCount(), k.Requests)
			}
			k.intended = h
		}
	}
	return nil
}

// decodeHistogram decodes a V2 compressed, base64 histogram. hdrhistogram-go's Decode reads
// its 8-byte header without checking the length, so short input is refused first, and any
// other panic on damaged input becomes an error.
func decodeHistogram(s string) (h *hdrhistogram.Histogram, err error) {
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("not base64: %w", err)
	}
	if len(raw) < 8 {
		return nil, fmt.Errorf("%d bytes, shorter than the 8-byte header", len(raw))
	}
	defer func() {
		if p := recover(); p != nil {
			h, err = nil, fmt.Errorf("damaged: %v", p)
		}
	}()
	h, err = hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("damaged: %w", err)
	}
	return h, nil
}

// Add adds o's measures to r's: counts and histograms per kind, the per-second series
// second by second from offset seconds into r's, and the partitions. Both must be decoded
// (or built by a Meter).
func (r *RawMeasures) Add(o RawMeasures, offset int) {
	for _, ok := range o.Kinds {
		i := -1
		for j := range r.Kinds {
			if r.Kinds[j].Kind == ok.Kind {
				i = j
				break
			}
		}
		if i < 0 {
			r.Kinds = append(r.Kinds, RawKind{Kind: ok.Kind, hist: newHistogram()})
			i = len(r.Kinds) - 1
		}
		k := &r.Kinds[i]
		if k.hist == nil {
			k.hist = newHistogram()
		}
		k.Requests += ok.Requests
		k.Entities += ok.Entities
		k.Errors += ok.Errors
		k.Throttles += ok.Throttles
		k.GaveUp += ok.GaveUp
		k.hist.Merge(ok.Histogram())
		if ok.intended != nil {
			if k.intended == nil {
				k.intended = newHistogram()
			}
			k.intended.Merge(ok.intended)
		}
	}
	r.Offered += o.Offered
	r.Late += o.Late
	r.Dropped += o.Dropped
	for i, sec := range o.Series {
		j := min(max(0, i+offset), MaxSeconds-1)
		for len(r.Series) <= j {
			r.Series = append(r.Series, Second{})
		}
		r.Series[j].add(sec)
	}
	byName := map[string]int{}
	for i, p := range r.Partitions {
		byName[p.Partition] = i
	}
	for _, p := range o.Partitions {
		if i, ok := byName[p.Partition]; ok {
			r.Partitions[i].Requests += p.Requests
			r.Partitions[i].Throttles += p.Throttles
			continue
		}
		byName[p.Partition] = len(r.Partitions)
		r.Partitions = append(r.Partitions, p)
	}
	sortPartitions(r.Partitions)
	sortKinds(r.Kinds)
}

func sortKinds(ks []RawKind) {
	for i := 1; i < len(ks); i++ {
		for j := i; j > 0 && kindOrder(ks[j].Kind) < kindOrder(ks[j-1].Kind); j-- {
			ks[j], ks[j-1] = ks[j-1], ks[j]
		}
	}
}
