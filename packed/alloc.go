package packed

import (
	"sync"
	"unsafe"
)

// Exact memory accounting. Bytes reports what the Go allocator really hands
// out for each of a set's objects: a request is rounded up to its size
// class (or to whole 8 KiB pages above 32 KiB), and since Go 1.22 an object
// with pointers larger than 512 bytes carries an 8-byte header. The size
// classes are read from the running allocator itself (append rounds a new
// slice's capacity up to its class), so they stay right across Go versions.

const (
	maxSmallSize = 32 << 10
	pageSize     = 8 << 10
	headerFrom   = 512
)

var (
	classesOnce sync.Once
	classes     []int
)

// allocSize returns the bytes allocated for an object of n bytes.
func allocSize(n uintptr, pointers bool) int {
	if n == 0 {
		return 0
	}
	if !pointers && n < 16 {
		return 16 // the tiny allocator's block; small objects may share it
	}
	if pointers && n > headerFrom {
		n += 8
	}
	if n > maxSmallSize {
		return int((n + pageSize - 1) / pageSize * pageSize)
	}
	classesOnce.Do(func() {
		for s := 1; s <= maxSmallSize; {
			c := cap(append([]byte(nil), make([]byte, s)...))
			classes = append(classes, c)
			s = c + 1
		}
	})
	lo, hi := 0, len(classes)
	for lo < hi {
		h := (lo + hi) / 2
		if classes[h] < int(n) {
			lo = h + 1
		} else {
			hi = h
		}
	}
	return classes[lo]
}

func sizeOf[T any]() uintptr {
	var v T
	return unsafe.Sizeof(v)
}

// Stats describes a set's structure and memory.
type Stats struct {
	Len          int // members
	Height       int // branch levels above the leaves
	Leaves       int
	Branches     int
	LeafCap      int // entries a full leaf holds
	LeafSlots    int // entry slots allocated in all leaves
	IndexSlots   int
	IndexTombs   int // tombstones in the index
	IndexMoving  int // slots of the table a resize is still moving members from
	ArenaBytes   int // standard layout: capacity of the member arena
	ArenaGarbage int
	Bytes        int // everything allocated, as Bytes reports
}

func (c *zcore[M, S, V]) stats() Stats {
	st := Stats{
		Len: c.n, Height: c.height, LeafCap: c.leafCap,
		IndexSlots: len(c.idx.groups) * groupSize, IndexTombs: c.idx.tombs,
		IndexMoving: len(c.idx.oldGroups()) * groupSize,
		ArenaBytes:  c.ar.capacity(), ArenaGarbage: c.ar.garbage,
	}
	st.Bytes = allocSize(sizeOf[zcore[M, S, V]](), true) // the ZSet header: ZSet.header
	c.walk(func(*branch[M, S]) {
		st.Branches++
		st.Bytes += allocSize(sizeOf[branch[M, S]](), true)
	}, func(l *leaf[M, S]) {
		st.Leaves++
		st.LeafSlots += l.capacity()
		st.Bytes += allocSize(sizeOf[leaf[M, S]](), true) +
			allocSize(uintptr(len(l.ents))*8, false) +
			allocSize(uintptr(len(l.keys))*sizeOf[M](), false) +
			allocSize(uintptr(len(l.scores))*sizeOf[S](), false) +
			allocSize(uintptr(len(l.pfx))*sizeOf[mprefix](), false)
	})
	st.Bytes += allocSize(uintptr(len(c.idx.groups))*sizeOf[group[M, V]](), false)
	st.Bytes += allocSize(uintptr(len(c.idx.oldGroups()))*sizeOf[group[M, V]](), false)
	st.Bytes += st.ArenaBytes
	return st
}

func (c *zcore[M, S, V]) bytes() int { return c.stats().Bytes }
