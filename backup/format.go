package backup

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"time"

	"github.com/goblindb/goblin/keyspace"
	"github.com/goblindb/goblin/packed"
	"github.com/goblindb/goblin/raftfsm"
)

// Version is the backup file format this build writes and reads.
const Version = 1

// magic starts every backup file; the format version follows it.
var magic = [8]byte{'G', 'O', 'B', 'L', 'I', 'N', 'B', 'K'}

// Compression of the snapshot inside a file.
const compressGzip = 1

// Sizes of the fixed parts of a file.
const (
	prefixLen  = len(magic) + 1 + 4 // magic, version, header length
	trailerLen = 8 + 8 + 4          // body length, snapshot length, CRC-32C
	// maxHeader bounds the header a reader allocates (rules are at most
	// 65536 patterns).
	maxHeader = 64 << 20
)

var (
	// ErrNotBackup: the file does not start as a backup does.
	ErrNotBackup = errors.New("not a goblin backup file")
	// ErrVersion: a format version this build does not read.
	ErrVersion = errors.New("backup format version not supported")
	// ErrCorrupt: the file is damaged (a checksum, a length or the
	// digest does not match) or truncated.
	ErrCorrupt = errors.New("corrupt backup file")
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Meta is what a backup records about itself.
type Meta struct {
	// Version is the file format; SnapshotVersion the version of the
	// snapshot format inside (raftfsm.SnapshotVersion of the writer).
	Version, SnapshotVersion uint8
	// Created is when the backup was written; Node the ID of the node it
	// was taken on.
	Created time.Time
	Node    string
	// Index is the log index the state is at, Term the term of that
	// entry (0: not known to the node that wrote it).
	Index, Term uint64
	// Digest is the state's digest (Digest), Counts what it holds.
	Digest Sum
	Counts Counts
	// Rules are the packed-layout rules the state had.
	Rules keyspace.Rules
	// Size is the file's size and SnapshotSize the size of the snapshot
	// it holds, uncompressed; known once the whole file is written or read.
	Size, SnapshotSize int64
}

// Write writes st as a backup to w: the header (m's Created, Node and
// Term; the index, digest, counts and rules are st's), the snapshot
// compressed, and the trailer. It returns the whole metadata.
func Write(w io.Writer, st *raftfsm.State, m Meta) (*Meta, error) {
	m.Version = Version
	m.SnapshotVersion = raftfsm.SnapshotVersion
	m.Index = st.Index
	m.Rules = append(keyspace.Rules(nil), st.View().Rules()...)
	m.Digest, m.Counts = Digest(st)
	m.Created = time.UnixMilli(m.Created.UnixMilli())

	file := crc32.New(castagnoli)
	cw := &countWriter{w: io.MultiWriter(w, file)}
	hdr := encodeHeader(&m)
	pre := append(append(magic[:0:0], magic[:]...), Version)
	pre = binary.LittleEndian.AppendUint32(pre, uint32(len(hdr)))
	pre = append(pre, hdr...)
	pre = binary.LittleEndian.AppendUint32(pre, crc32.Checksum(pre, castagnoli))
	if _, err := cw.Write(pre); err != nil {
		return nil, err
	}
	start := cw.n
	gz, err := gzip.NewWriterLevel(cw, gzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	raw := &countWriter{w: gz}
	bw := bufio.NewWriterSize(raw, 1<<16)
	if err := raftfsm.WriteSnapshot(bw, st); err != nil {
		return nil, err
	}
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	tr := binary.LittleEndian.AppendUint64(nil, uint64(cw.n-start))
	tr = binary.LittleEndian.AppendUint64(tr, uint64(raw.n))
	file.Write(tr)
	tr = binary.LittleEndian.AppendUint32(tr, file.Sum32())
	if _, err := w.Write(tr); err != nil {
		return nil, err
	}
	m.Size = cw.n + int64(len(tr))
	m.SnapshotSize = raw.n
	return &m, nil
}

// ReadMeta reads and checks a backup's header only: enough to print what
// a file holds without reading it whole.
func ReadMeta(r io.Reader) (*Meta, error) {
	m, _, err := readHeader(r)
	return m, err
}

// Read reads a whole backup and verifies it: the header's and the file's
// checksums, the compressed stream's, the snapshot's (decoding every
// set), the lengths, and the digest, recomputed from the decoded state.
// A file cut short or changed anywhere is refused with ErrCorrupt. The
// state is returned only when everything matches.
func Read(r io.Reader) (*Meta, *raftfsm.State, error) {
	hb := &holdback{r: r, file: crc32.New(castagnoli)}
	m, hdrLen, err := readHeader(hb)
	if err != nil {
		return nil, nil, err
	}
	// The snapshot is read through a buffer; ReadSnapshot reads its stream
	// to the end, and the body's end is wherever the trailer starts.
	gz, err := gzip.NewReader(bufio.NewReaderSize(hb, 1<<16))
	if err != nil {
		return nil, nil, corrupt(err)
	}
	gz.Multistream(false)
	raw := &countReader{r: gz}
	st, err := raftfsm.ReadSnapshot(raw)
	if err != nil {
		return nil, nil, corrupt(err)
	}
	if _, err := io.Copy(io.Discard, hb); err != nil {
		return nil, nil, corrupt(err)
	}
	if len(hb.tail) != trailerLen {
		return nil, nil, corrupt(errors.New("truncated"))
	}
	bodyLen := int64(binary.LittleEndian.Uint64(hb.tail[0:]))
	rawLen := int64(binary.LittleEndian.Uint64(hb.tail[8:]))
	hb.file.Write(hb.tail[:16])
	switch {
	case binary.LittleEndian.Uint32(hb.tail[16:]) != hb.file.Sum32():
		return nil, nil, corrupt(errors.New("file checksum mismatch"))
	case bodyLen != hb.n-int64(hdrLen) || rawLen != raw.n:
		return nil, nil, corrupt(errors.New("lengths do not match the trailer"))
	case st.Index != m.Index:
		return nil, nil, corrupt(fmt.Errorf("the snapshot is at index %d, the header says %d", st.Index, m.Index))
	}
	sum, counts := Digest(st)
	if sum != m.Digest {
		return nil, nil, corrupt(fmt.Errorf("digest mismatch: the state's is %s, the header records %s", sum, m.Digest))
	}
	m.Counts = counts
	m.Size = hb.n + trailerLen
	m.SnapshotSize = rawLen
	return m, st, nil
}

func corrupt(err error) error { return fmt.Errorf("%w: %v", ErrCorrupt, err) }

// readHeader reads the prefix, the header and its checksum; it returns
// how many bytes they took.
func readHeader(r io.Reader) (*Meta, int, error) {
	var pre [prefixLen]byte
	if n, err := io.ReadFull(r, pre[:]); err != nil {
		if n >= len(magic) && [8]byte(pre[:8]) == magic {
			return nil, 0, corrupt(errors.New("truncated header"))
		}
		return nil, 0, ErrNotBackup
	}
	if [8]byte(pre[:8]) != magic {
		return nil, 0, ErrNotBackup
	}
	if v := pre[8]; v != Version {
		return nil, 0, fmt.Errorf("%w: the file is version %d, this goblind reads version %d", ErrVersion, v, Version)
	}
	n := binary.LittleEndian.Uint32(pre[9:])
	if n > maxHeader {
		return nil, 0, corrupt(errors.New("header length"))
	}
	rest := make([]byte, int(n)+4)
	if _, err := io.ReadFull(r, rest); err != nil {
		return nil, 0, corrupt(errors.New("truncated header"))
	}
	hdr := rest[:n]
	sum := crc32.Update(crc32.Checksum(pre[:], castagnoli), castagnoli, hdr)
	if binary.LittleEndian.Uint32(rest[n:]) != sum {
		return nil, 0, corrupt(errors.New("header checksum mismatch"))
	}
	m, err := decodeHeader(hdr)
	if err != nil {
		return nil, 0, err
	}
	m.Version = pre[8]
	if m.SnapshotVersion > raftfsm.SnapshotVersion {
		return nil, 0, fmt.Errorf("%w: the state inside is in snapshot format %d, this goblind reads up to %d", ErrVersion, m.SnapshotVersion, raftfsm.SnapshotVersion)
	}
	return m, prefixLen + len(rest), nil
}

// The header:
//
//	[created varint ms] [node] [index uvarint] [term uvarint] [digest 32]
//	[snapshot version u8] [compression u8]
//	[keys uvarint] [expires uvarint] [members uvarint] [users varint]
//	[layouts uvarint] { [layout u8] [keys uvarint] [members uvarint] }
//	[rules uvarint] { [pattern] [layout u8] }
//
// where [x] is a uvarint length and the bytes.
func encodeHeader(m *Meta) []byte {
	b := binary.AppendVarint(nil, m.Created.UnixMilli())
	b = appendBytes(b, []byte(m.Node))
	b = binary.AppendUvarint(b, m.Index)
	b = binary.AppendUvarint(b, m.Term)
	b = append(b, m.Digest[:]...)
	b = append(b, m.SnapshotVersion, compressGzip)
	c := &m.Counts
	b = binary.AppendUvarint(b, c.Keys)
	b = binary.AppendUvarint(b, c.Expires)
	b = binary.AppendUvarint(b, c.Members)
	b = binary.AppendVarint(b, int64(c.Users))
	b = binary.AppendUvarint(b, uint64(len(c.Layouts)))
	for _, lc := range c.Layouts {
		b = append(b, byte(lc.Layout))
		b = binary.AppendUvarint(b, lc.Keys)
		b = binary.AppendUvarint(b, lc.Members)
	}
	b = binary.AppendUvarint(b, uint64(len(m.Rules)))
	for _, r := range m.Rules {
		b = appendBytes(b, []byte(r.Pattern))
		b = append(b, byte(r.Layout))
	}
	return b
}

func appendBytes(b, s []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func decodeHeader(b []byte) (*Meta, error) {
	d := &hdrDecoder{b: b}
	m := &Meta{}
	m.Created = time.UnixMilli(d.varint())
	m.Node = string(d.bytes())
	m.Index = d.uvarint()
	m.Term = d.uvarint()
	copy(m.Digest[:], d.take(len(m.Digest)))
	m.SnapshotVersion = d.byte()
	if comp := d.byte(); d.err == nil && comp != compressGzip {
		return nil, corrupt(fmt.Errorf("unknown compression %d", comp))
	}
	c := &m.Counts
	c.Keys = d.uvarint()
	c.Expires = d.uvarint()
	c.Members = d.uvarint()
	c.Users = int(d.varint())
	for n := d.count(); n > 0 && d.err == nil; n-- {
		lc := LayoutCount{Layout: packed.Layout(d.byte()), Keys: d.uvarint(), Members: d.uvarint()}
		if !lc.Layout.Valid() {
			d.err = errors.New("bad layout")
		}
		c.Layouts = append(c.Layouts, lc)
	}
	for n := d.count(); n > 0 && d.err == nil; n-- {
		r := keyspace.Rule{Pattern: string(d.bytes()), Layout: packed.Layout(d.byte())}
		if !r.Layout.Valid() {
			d.err = errors.New("bad layout")
		}
		m.Rules = append(m.Rules, r)
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = errors.New("trailing bytes")
	}
	if d.err != nil {
		return nil, corrupt(fmt.Errorf("header: %v", d.err))
	}
	return m, nil
}

// hdrDecoder reads the header's fields; the first error sticks.
type hdrDecoder struct {
	b   []byte
	err error
}

var errShort = errors.New("truncated")

func (d *hdrDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *hdrDecoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *hdrDecoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b) {
		d.err = errShort
		return nil
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

func (d *hdrDecoder) byte() byte {
	if b := d.take(1); b != nil {
		return b[0]
	}
	return 0
}

func (d *hdrDecoder) bytes() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.err = errShort
		return nil
	}
	return d.take(int(n))
}

// count reads a count of items, each at least one byte long.
func (d *hdrDecoder) count() uint64 {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.err = errShort
		return 0
	}
	return n
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// holdback reads r but keeps its last trailerLen bytes back: the
// trailer, which follows a body of unknown length. It hashes (file) and
// counts (n) every byte it returns; at the end, tail holds the bytes kept
// back (fewer than trailerLen when the file is too short).
type holdback struct {
	r    io.Reader
	file hash.Hash32
	buf  []byte // read from r; buf[off:] not returned yet
	off  int
	n    int64
	eof  bool
	tail []byte
}

func (h *holdback) Read(p []byte) (int, error) {
	for len(h.buf)-h.off <= trailerLen {
		if h.eof {
			h.tail = h.buf[h.off:]
			return 0, io.EOF
		}
		if h.buf == nil {
			h.buf = make([]byte, 0, 64<<10)
		}
		// Keep what is unread at the front, and fill the rest.
		h.buf = h.buf[:copy(h.buf[:cap(h.buf)], h.buf[h.off:])]
		h.off = 0
		k, err := h.r.Read(h.buf[len(h.buf):cap(h.buf)])
		h.buf = h.buf[:len(h.buf)+k]
		if err == io.EOF {
			h.eof = true
		} else if err != nil {
			return 0, err
		}
	}
	k := copy(p, h.buf[h.off:len(h.buf)-trailerLen])
	h.off += k
	h.file.Write(p[:k])
	h.n += int64(k)
	return k, nil
}
