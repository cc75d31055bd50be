package persist

import (
	"bufio"
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

// errTorn marks the end of the valid frames: an incomplete frame, or one that fails its
// check.
var errTorn = errors.New("torn or corrupt frame")

// readFrame reads one frame. It returns io.EOF at a clean end and errTorn at a frame that
// is cut short or fails its length or checksum check.
func readFrame(r *bufio.Reader) ([]byte, error) {
	var h [frameHeader]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		if err == io.EOF {
			return nil, io.EOF
		}
		if err == io.ErrUnexpectedEOF {
			return nil, errTorn
		}
		return nil, err
	}
	n := binary.LittleEndian.Uint32(h[0:4])
	if n > maxPayload {
		return nil, errTorn
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(r, p); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, errTorn
		}
		return nil, err
	}
	if crc32.Checksum(p, castagnoli) != binary.LittleEndian.Uint32(h[4:8]) {
		return nil, errTorn
	}
	return p, nil
}

// replayLog calls apply for every valid record of the log at path, in order, and returns
// the offset just past the last valid frame and how many records it applied. A missing
// file is an empty log.
func replayLog(path string, apply func(record) error) (valid int64, n int, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		p, err := readFrame(r)
		if err == io.EOF || err == errTorn {
			return valid, n, nil
		}
		if err != nil {
			return valid, n, fmt.Errorf("read %s: %w", path, err)
		}
		rec, err := decodeRecord(p)
		if err != nil {
			// A frame whose checksum holds but whose content does not decode was written by
			// something else: stop as at a torn frame rather than guess.
			return valid, n, nil
		}
		if err := apply(rec); err != nil {
			return valid, n, fmt.Errorf("replay record %d of %s: %w", n+1, path, err)
		}
		valid += int64(frameHeader + len(p))
		n++
	}
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
