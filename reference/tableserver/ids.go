package tableserver

import (
	"strings"
	"sync"

	"github.com/tableconform/conform/reference/wire"
)

// newRequestID returns a new request id, of wire.NewID's form. Ids are cut from strings of
// idsPerBatch ids made at once: one allocation per batch instead of one per request.
func newRequestID() string {
	b := idBatches.Get().(*idBatch)
	if b.next == len(b.text) {
		var sb strings.Builder
		sb.Grow(idsPerBatch * wire.IDLen)
		var one [wire.IDLen]byte
		for range idsPerBatch {
			sb.Write(wire.AppendID(one[:0]))
		}
		b.text, b.next = sb.String(), 0
	}
	id := b.text[b.next : b.next+wire.IDLen]
	b.next += wire.IDLen
	idBatches.Put(b)
	return id
}

const idsPerBatch = 64

type idBatch struct {
	text string // idsPerBatch ids, of which those from next on are unused
	next int
}

var idBatches = sync.Pool{New: func() any { return new(idBatch) }}
