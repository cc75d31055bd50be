package persist

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
)

// A frame is the length of the payload (uint32, little endian), its CRC-32C (uint32) and
// the payload.
const frameHeader = 8

// maxPayload bounds a record: the largest write is a transaction of 4 MiB of JSON, whose
// binary form is smaller; snapshot records are cut at snapshotChunkBytes.
const maxPayload = 64 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// frame returns payload framed for the log.
func frame(payload []byte) []byte {
	out := make([]byte, frameHeader, frameHeader+len(payload))
	binary.LittleEndian.PutUint32(out[0:4], uint32(len(payload)))
	binary.LittleEndian.PutUint32(out[4:8], crc32.Checksum(payload, castagnoli))
	return append(out, payload...)
}

// errBadFrame marks a frame that is cut short or fails its length or checksum check.
var errBadFrame = errors.New("torn or corrupt frame")

// readFrame reads one frame. It returns io.EOF at a clean end and errBadFrame at a frame
// that is cut short or fails its length or checksum check.
func readFrame(r *bufio.Reader) ([]byte, error) {
	var h [frameHeader]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		if err == io.EOF {
			return nil, io.EOF
		}
		if err == io.ErrUnexpectedEOF {
			return nil, errBadFrame
		}
		return nil, err
	}
	n := binary.LittleEndian.Uint32(h[0:4])
	if n > maxPayload {
		return nil, errBadFrame
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(r, p); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, errBadFrame
		}
		return nil, err
	}
	if crc32.Checksum(p, castagnoli) != binary.LittleEndian.Uint32(h[4:8]) {
		return nil, errBadFrame
	}
	return p, nil
}

// logScan is what reading one log found.
type logScan struct {
	valid   int64  // offset just past the last good record
	records int    // good records, all applied
	size    int64  // the file's size
	damage  string // what is wrong at valid, or "" when the log ends cleanly there
	torn    bool   // the damage can only be a torn last write: nothing intact follows it
}

// scanLog calls apply for every good record of the log at path, in order, up to the first
// frame that is bad (cut short, failing its check, not decoding) or whose record does not
// apply, and says what it found there. A bad frame is a torn tail (torn) only when nothing
// intact follows it: a write that a crash tore is the last one, so intact records after a
// bad frame mean the log was damaged, not torn. Only an error reading the file is returned
// as an error.
func scanLog(path string, apply func(record) error) (logScan, error) {
	f, err := os.Open(path)
	if err != nil {
		return logScan{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return logScan{}, err
	}
	sc := logScan{size: fi.Size()}
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		p, err := readFrame(r)
		if err == io.EOF {
			return sc, nil
		}
		if err != nil && err != errBadFrame {
			return sc, fmt.Errorf("read %s: %w", path, err)
		}
		if err == errBadFrame {
			return classifyBadFrame(f, sc)
		}
		rec, err := decodeRecord(p)
		if err != nil {
			if len(p) == 0 {
				// A zero length and checksum: maybe the start of a tail the disk never wrote.
				return classifyBadFrame(f, sc)
			}
			// Its checksum holds, so it was written whole: damaged, or written by something else.
			sc.damage = fmt.Sprintf("the record at offset %d has a valid checksum but does not decode", sc.valid)
			return sc, nil
		}
		if err := apply(rec); err != nil {
			sc.damage = fmt.Sprintf("record %d at offset %d does not apply: %v", sc.records+1, sc.valid, err)
			return sc, nil
		}
		sc.valid += int64(frameHeader + len(p))
		sc.records++
	}
}

// classifyBadFrame decides whether the bad frame at sc.valid is a torn last write, as
// etcd's WAL does: the frame is cut short by the end of the file, or the disk never wrote
// part of it (everything from the frame to the end of the file is zero bytes, or its
// header is, or a whole 512-byte sector inside it is), and no intact frame follows it. A whole frame of other
// bytes that fails its checksum was damaged after it was written.
func classifyBadFrame(f *os.File, sc logScan) (logScan, error) {
	rest := sc.size - sc.valid
	if rest > frameHeader+maxPayload {
		sc.damage = fmt.Sprintf("a bad frame at offset %d is followed by %d bytes, more than one write", sc.valid, rest)
		return sc, nil
	}
	b := make([]byte, rest)
	if _, err := f.ReadAt(b, sc.valid); err != nil && err != io.EOF {
		return sc, err
	}
	if at := nextIntactFrame(b); at >= 0 {
		sc.damage = fmt.Sprintf("a bad frame at offset %d is followed by intact records (the first at offset %d)", sc.valid, sc.valid+int64(at))
		return sc, nil
	}
	if !tornFrame(b, sc.valid) {
		sc.damage = fmt.Sprintf("the last record, at offset %d, fails its checksum though it is whole (%d bytes)", sc.valid, rest)
		return sc, nil
	}
	sc.torn = true
	sc.damage = fmt.Sprintf("a torn last record at offset %d (%d bytes)", sc.valid, rest)
	return sc, nil
}

// sectorBytes is the unit a disk writes whole or not at all.
const sectorBytes = 512

// tornFrame reports whether b, the bytes from a bad frame at offset at to the end of the
// file, look like a write the disk did not finish: cut short, or partly never written. A
// frame header of zero bytes is one whose first sector was never written, whatever the
// later sectors hold: its length is unknown (etcd's WAL reads a zero length as the end).
func tornFrame(b []byte, at int64) bool {
	if len(b) < frameHeader || bytes.Count(b, []byte{0}) == len(b) || bytes.Count(b[:frameHeader], []byte{0}) == frameHeader {
		return true
	}
	n := int64(binary.LittleEndian.Uint32(b))
	if frameHeader+n > int64(len(b)) {
		return true // cut short: the frame's end lies past the end of the file
	}
	end := at + frameHeader + n
	for s := (at + sectorBytes - 1) / sectorBytes * sectorBytes; s+sectorBytes <= end; s += sectorBytes {
		sector := b[s-at : s-at+sectorBytes]
		if bytes.Count(sector, []byte{0}) == sectorBytes {
			return true
		}
	}
	return false
}

// nextIntactFrame returns the offset of the first intact frame in b after offset 0 (a frame
// whose length fits, whose checksum holds and whose record decodes), or -1.
func nextIntactFrame(b []byte) int {
	for i := 1; i+frameHeader < len(b); i++ {
		n := int(binary.LittleEndian.Uint32(b[i:]))
		if n == 0 || n > len(b)-i-frameHeader {
			continue
		}
		p := b[i+frameHeader : i+frameHeader+n]
		switch p[0] {
		case kindCreateTable, kindDeleteTable, kindEntities:
		default:
			continue
		}
		if crc32.Checksum(p, castagnoli) != binary.LittleEndian.Uint32(b[i+4:]) {
			continue
		}
		if _, err := decodeRecord(bytes.Clone(p)); err == nil {
			return i
		}
	}
	return -1
}

// syncDir makes a rename or a file creation in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
