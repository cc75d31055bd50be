package tableserver

import (
	"math/rand/v2"
	"strings"
	"sync/atomic"

	"github.com/tableconform/conform/reference/wire"
)

// newRequestID returns a new request id, of wire.NewID's form. Ids are cut from strings of
// idsPerBatch ids made at once: one allocation and two random draws per batch instead of
// per request. The ids of a batch are distinct (makeIDBatch); batches differ by their
// random seeds, as ids drawn at random do.
func newRequestID() string {
	for {
		b := currentIDs.Load()
		if b != nil {
			if i := b.next.Add(1) - 1; i < idsPerBatch {
				return b.text[i*wire.IDLen : (i+1)*wire.IDLen]
			}
		}
		// The batch is used up: the request that replaces it first wins, the others take
		// theirs from the winner's.
		currentIDs.CompareAndSwap(b, makeIDBatch())
	}
}

const idsPerBatch = 64

type idBatch struct {
	text string       // idsPerBatch ids
	next atomic.Int64 // the index of the next unused id; idsPerBatch and beyond: none left
}

// currentIDs is the batch requests take their ids from.
var currentIDs atomic.Pointer[idBatch]

// makeIDBatch makes idsPerBatch ids from two random seeds: the halves of the i-th id are
// splitmix64 of each seed plus i steps of an odd constant. splitmix64's finalizer is a
// bijection of 64-bit words, so that no two ids of a batch are equal.
func makeIDBatch() *idBatch {
	hi, lo := rand.Uint64(), rand.Uint64()
	var sb strings.Builder
	sb.Grow(idsPerBatch * wire.IDLen)
	var one [wire.IDLen]byte
	for range idsPerBatch {
		hi += splitmixStep
		lo += splitmixStep
		sb.Write(wire.AppendIDOf(one[:0], splitmix(hi), splitmix(lo)))
	}
	return &idBatch{text: sb.String()}
}

// splitmixStep is splitmix64's increment (the golden ratio's fraction, odd).
const splitmixStep = 0x9e3779b97f4a7c15

// splitmix is splitmix64's output function (Steele, Lea and Flood, 2014).
func splitmix(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
