package store

// pointIndex maps the point hash of an entity's keys (table.pointHash) to where its bytes
// lie: an open-addressing table with linear probing, one probe line per look-up in the
// common case, and no pointer for the collector to trace. The hash 0 marks an empty slot,
// so stored hashes have their lowest bit set; two keys whose hashes differ only there
// share an entry, which the point index already handles (ambiguous).
type pointIndex struct {
	slots []pointSlot // a power of two in length, at most 3/4 full; nil when empty
	used  int
}

type pointSlot struct {
	hash uint64
	at   loc
}

// pointIndexMinSlots is the size of the first table.
const pointIndexMinSlots = 64

func pointKey(h uint64) uint64 { return h | 1 }

// get returns the loc stored for hash h.
func (p *pointIndex) get(h uint64) (loc, bool) {
	if p.slots == nil {
		return loc{}, false
	}
	h = pointKey(h)
	mask := uint64(len(p.slots) - 1)
	for i := spread(h) & mask; ; i = (i + 1) & mask {
		s := &p.slots[i]
		switch s.hash {
		case h:
			return s.at, true
		case 0:
			return loc{}, false
		}
	}
}

// set stores l for hash h, replacing what was stored.
func (p *pointIndex) set(h uint64, l loc) {
	if 4*(p.used+1) > 3*len(p.slots) {
		p.grow()
	}
	h = pointKey(h)
	mask := uint64(len(p.slots) - 1)
	for i := spread(h) & mask; ; i = (i + 1) & mask {
		s := &p.slots[i]
		switch s.hash {
		case h:
			s.at = l
			return
		case 0:
			s.hash, s.at = h, l
			p.used++
			return
		}
	}
}

// delete removes hash h, moving back the entries that probed past it (no tombstones).
func (p *pointIndex) delete(h uint64) {
	if p.slots == nil {
		return
	}
	h = pointKey(h)
	mask := uint64(len(p.slots) - 1)
	i := spread(h) & mask
	for p.slots[i].hash != h {
		if p.slots[i].hash == 0 {
			return
		}
		i = (i + 1) & mask
	}
	for j := (i + 1) & mask; p.slots[j].hash != 0; j = (j + 1) & mask {
		// The entry at j may fill the hole at i unless its home lies cyclically in (i, j].
		home := spread(p.slots[j].hash) & mask
		if (j-home)&mask >= (j-i)&mask {
			p.slots[i] = p.slots[j]
			i = j
		}
	}
	p.slots[i] = pointSlot{}
	p.used--
}

func (p *pointIndex) grow() { p.resize(max(pointIndexMinSlots, 2*len(p.slots))) }

// reserve sizes an empty index for n entries.
func (p *pointIndex) reserve(n int) {
	size := pointIndexMinSlots
	for 3*size < 4*n {
		size *= 2
	}
	p.resize(size)
}

func (p *pointIndex) resize(size int) {
	old := p.slots
	p.slots = make([]pointSlot, size)
	p.used = 0
	mask := uint64(len(p.slots) - 1)
	for _, s := range old {
		if s.hash == 0 {
			continue
		}
		i := spread(s.hash) & mask
		for p.slots[i].hash != 0 {
			i = (i + 1) & mask
		}
		p.slots[i] = s
		p.used++
	}
}

// spread mixes a hash's high bits into the low bits that choose a slot, so that a hash
// narrowed by tests (pointHashMask) still spreads.
func spread(h uint64) uint64 { return h ^ h>>29 ^ h>>47 }
