package node

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// checkBoltPages walks the page tree of the bbolt file at path (a
// raft-boltdb store) before bbolt opens it, and reports a tree bbolt
// cannot read safely: a page reached twice (a loop, or two parents), a
// page number past the file's last page, a page that is neither a branch
// nor a leaf where the tree needs one, an element that runs off its page,
// or a tree deeper than any file bbolt writes; and a freelist page that
// is not one, or counts more pages than it holds (bbolt made a slice of
// that count, and a count of billions ended the process out of memory).
// bbolt trusts the links
// between its pages (only its two meta pages carry a checksum): a loop
// made it search for ever, its memory growing, or recurse until Go's stack
// overflowed, so a start never ended or crashed. Other damage is left to
// bbolt, whose faults openBolt turns into errors.
//
// A file that does not exist or is empty (bbolt creates it), or whose
// meta pages are both invalid (bbolt refuses it itself), passes. Only
// the pages of the tree are read, each once.
func checkBoltPages(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	w := &boltWalk{f: f, size: fi.Size()}
	m, ok := w.meta()
	if !ok {
		return nil
	}
	// Pages past the file's end are not there to read (bbolt would fault
	// on them): the walk reaches neither those nor any past the page
	// count, the meta's high-water mark.
	w.pageSize, w.last = int64(m.pageSize), m.pgid
	w.pages = min(m.pgid, uint64(w.size/w.pageSize))
	w.seen = make([]uint64, (w.pages+63)/64)
	err = w.page(m.root, 0)
	if err == nil {
		err = w.freelist(m.freelist)
	}
	if err != nil {
		return fmt.Errorf("%s is damaged: %w", path, err)
	}
	return nil
}

// bbolt's layout (go.etcd.io/bbolt, file format version 2), little-endian:
// a page starts with its id (8 bytes), flags (2), element count (2) and
// overflow (4: the pages after it that it spans). A branch's elements
// are position, key size (4 bytes each) and child page (8); a leaf's are
// flags, position, key size and value size (4 bytes each); a position
// counts from the element's own first byte. A leaf element flagged as a
// bucket holds the bucket's header, its root page (8 bytes) and sequence
// (8), followed, when the root is 0, by the bucket's inline leaf page.
// A meta page holds, after the header, magic, version, page size and
// flags (4 bytes each), the root bucket's header (16), the freelist's
// page, the page count and the transaction ID (8 each), and an FNV-1a
// checksum (8) of what precedes it in the meta.
const (
	boltPageHeader  = 16
	boltElement     = 16
	boltBucketHead  = 16
	boltBranch      = 0x01
	boltLeaf        = 0x02
	boltFreelist    = 0x10
	boltBucketEntry = 0x01
	// boltNoFreelist is the meta's freelist page when the freelist is not
	// written (bbolt rebuilds it from the tree).
	boltNoFreelist = 1<<64 - 1
	boltMagic      = 0xED0CDAED
	boltVersion    = 2
	// boltMaxDepth is beyond any tree bbolt writes: every page but a
	// root holds at least two elements.
	boltMaxDepth = 64
)

type boltMeta struct {
	pageSize             uint32
	root, freelist, pgid uint64
	txid                 uint64
}

type boltWalk struct {
	f              *os.File
	size, pageSize int64
	// last is the meta's page count (its high-water mark); pages is that
	// or, in a file cut short, the pages the file holds.
	last, pages uint64
	seen        []uint64 // a bit per page: reached by the walk
	bufs        [][]byte // a page's bytes, by depth
}

// meta is the meta page bbolt uses: the valid one with the higher
// transaction ID. The first is read at offset 0 and gives the page size,
// at which the second is; without it, the second is looked for at the
// system's page size, as bbolt does.
func (w *boltWalk) meta() (boltMeta, bool) {
	m0, ok0 := w.readMeta(0)
	at := int64(os.Getpagesize())
	if ok0 {
		at = int64(m0.pageSize)
	}
	m1, ok1 := w.readMeta(at)
	switch {
	case ok0 && ok1 && m1.txid > m0.txid, !ok0 && ok1:
		return m1, true
	case ok0:
		return m0, true
	}
	return boltMeta{}, false
}

func (w *boltWalk) readMeta(off int64) (boltMeta, bool) {
	var b [boltPageHeader + 64]byte
	if _, err := w.f.ReadAt(b[:], off); err != nil {
		return boltMeta{}, false
	}
	m := b[boltPageHeader:]
	h := fnv.New64a()
	h.Write(m[:56])
	le := binary.LittleEndian
	if le.Uint32(m) != boltMagic || le.Uint32(m[4:]) != boltVersion ||
		le.Uint64(m[56:]) != 0 && le.Uint64(m[56:]) != h.Sum64() {
		return boltMeta{}, false
	}
	ps := le.Uint32(m[8:])
	if ps < 1024 || ps&(ps-1) != 0 {
		return boltMeta{}, false
	}
	return boltMeta{pageSize: ps, root: le.Uint64(m[16:]), freelist: le.Uint64(m[32:]), pgid: le.Uint64(m[40:]), txid: le.Uint64(m[48:])}, true
}

// read reads the first len(b) bytes of page id, which ref names ("a
// link", "the freelist"), into b, once id and the pages its overflow
// spans lie within the tree's pages and the file; it returns the
// overflow.
func (w *boltWalk) read(id uint64, ref string, b []byte) (over uint64, err error) {
	if id < 2 || id >= w.last {
		return 0, fmt.Errorf("%s names page %d, outside the tree's pages 2 to %d", ref, id, w.last-1)
	}
	if id >= w.pages {
		return 0, fmt.Errorf("page %d reaches past the end of the file (%d bytes): it was cut short", id, w.size)
	}
	if _, err := w.f.ReadAt(b, int64(id)*w.pageSize); err != nil && !errors.Is(err, io.EOF) {
		return 0, fmt.Errorf("page %d: %w", id, err)
	}
	over = uint64(binary.LittleEndian.Uint32(b[12:]))
	if over >= w.last-id {
		return 0, fmt.Errorf("page %d runs past the last page (%d more)", id, over)
	}
	if over >= w.pages-id {
		return 0, fmt.Errorf("page %d runs past the end of the file (%d bytes): it was cut short", id, w.size)
	}
	return over, nil
}

// freelist checks the freelist page id: a freelist page, within the file,
// whose count of free pages (its element count, or when that is 0xFFFF
// the first 8 bytes after its header) fits in it.
func (w *boltWalk) freelist(id uint64) error {
	if id == boltNoFreelist {
		return nil
	}
	var b [boltPageHeader + 8]byte
	over, err := w.read(id, "the freelist", b[:])
	if err != nil {
		return err
	}
	le := binary.LittleEndian
	if flags := le.Uint16(b[8:]); flags&boltFreelist == 0 {
		return fmt.Errorf("the freelist's page %d is not a freelist page (flags %#x)", id, flags)
	}
	count, first := uint64(le.Uint16(b[10:])), uint64(0)
	if count == 0xFFFF {
		count, first = le.Uint64(b[boltPageHeader:]), 1
	}
	if room := ((over+1)*uint64(w.pageSize) - boltPageHeader) / 8; count > room-first {
		return fmt.Errorf("the freelist's page %d counts %d free pages, more than it holds (%d)", id, count, room-first)
	}
	return nil
}

// page checks the tree under page id, reached at depth.
func (w *boltWalk) page(id uint64, depth int) error {
	if depth > boltMaxDepth {
		return fmt.Errorf("page %d is %d levels deep", id, depth)
	}
	// One buffer per depth: a branch's stays whole while its children
	// are read.
	for len(w.bufs) <= depth {
		w.bufs = append(w.bufs, make([]byte, w.pageSize))
	}
	b := w.bufs[depth][:w.pageSize]
	over, err := w.read(id, "a link", b)
	if err != nil {
		return err
	}
	for p := id; p <= id+over; p++ {
		if w.seen[p/64]&(1<<(p%64)) != 0 {
			return fmt.Errorf("page %d is reached twice: its links go round in a circle or join", p)
		}
		w.seen[p/64] |= 1 << (p % 64)
	}
	if over > 0 {
		n := int64(over+1) * w.pageSize
		if int64(cap(b)) < n {
			b = append(b[:cap(b)], make([]byte, n-int64(cap(b)))...)
			w.bufs[depth] = b
		}
		b = b[:n]
		if _, err := w.f.ReadAt(b[w.pageSize:], int64(id+1)*w.pageSize); err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("page %d: %w", id, err)
		}
	}
	return w.elements(b, fmt.Sprintf("page %d", id), depth)
}

// elements checks a branch or leaf page held in b (a page of the file
// with its overflow, or a bucket's inline page), named where for errors.
func (w *boltWalk) elements(b []byte, where string, depth int) error {
	le := binary.LittleEndian
	if len(b) < boltPageHeader {
		return fmt.Errorf("%s is cut short", where)
	}
	flags, count := le.Uint16(b[8:]), int(le.Uint16(b[10:]))
	if flags != boltBranch && flags != boltLeaf {
		return fmt.Errorf("%s is not a branch or leaf page (flags %#x)", where, flags)
	}
	if boltPageHeader+count*boltElement > len(b) {
		return fmt.Errorf("%s: %d elements run off it", where, count)
	}
	for i := range count {
		e := boltPageHeader + i*boltElement
		if flags == boltBranch {
			pos, ksize := int64(le.Uint32(b[e:])), int64(le.Uint32(b[e+4:]))
			if int64(e)+pos+ksize > int64(len(b)) {
				return fmt.Errorf("%s: element %d's key runs off it", where, i)
			}
			if err := w.page(le.Uint64(b[e+8:]), depth+1); err != nil {
				return err
			}
			continue
		}
		pos, ksize, vsize := int64(le.Uint32(b[e+4:])), int64(le.Uint32(b[e+8:])), int64(le.Uint32(b[e+12:]))
		k := int64(e) + pos
		if k+ksize+vsize > int64(len(b)) {
			return fmt.Errorf("%s: element %d runs off it", where, i)
		}
		if le.Uint32(b[e:])&boltBucketEntry == 0 {
			continue
		}
		v := b[k+ksize : k+ksize+vsize]
		if len(v) < boltBucketHead {
			return fmt.Errorf("%s: element %d is a bucket of %d bytes", where, i, len(v))
		}
		var err error
		if root := le.Uint64(v); root != 0 {
			err = w.page(root, depth+1)
		} else {
			err = w.elements(v[boltBucketHead:], fmt.Sprintf("%s's element %d (an inline bucket)", where, i), depth+1)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
