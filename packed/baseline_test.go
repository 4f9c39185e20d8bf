package packed

import (
	"runtime"
	"sort"
	"strconv"
	"strings"
	"unsafe"

	"github.com/tidwall/btree"
)

// The baseline a Go developer would otherwise write: a map from member to
// score and a tidwall/btree BTreeG of (score, member) items, without locks.
// BTreeG keeps counted nodes and offers GetAt (select) but no rank of an
// item, so rank is a binary search over GetAt, O(log² n). Standard members
// are looked up through a view of the member's bytes, without a copy, and
// copied into a string only to be stored (map keys and tree items keep it),
// as a careful Go developer would write it: a no-op update, a removal or a
// rank allocates nothing, a rescore or an insertion one string.

type item[K int32 | string, V float32 | float64] struct {
	s V
	m K
}

func lessItem[K int32 | string, V float32 | float64](a, b item[K, V]) bool {
	if a.s != b.s {
		return a.s < b.s
	}
	return a.m < b.m
}

type baseline[K int32 | string, V float32 | float64] struct {
	tr    *btree.BTreeG[item[K, V]]
	idx   map[K]V
	key   func([]byte) K // the member as K, valid only until m changes
	own   func(K) K      // a key that may be stored
	heap0 uint64
}

func newBaseline(l Layout) zimpl {
	if l == Standard {
		return newBase[string, float64](func(m []byte) string {
			return unsafe.String(unsafe.SliceData(m), len(m))
		}, strings.Clone)
	}
	return newBase[int32, float32](func(m []byte) int32 {
		v, _ := strconv.ParseInt(string(m), 10, 32)
		return int32(v)
	}, func(k int32) int32 { return k })
}

func newBase[K int32 | string, V float32 | float64](key func([]byte) K, own func(K) K) *baseline[K, V] {
	return &baseline[K, V]{
		tr:  btree.NewBTreeGOptions(lessItem[K, V], btree.Options{NoLocks: true}),
		idx: map[K]V{},
		key: key,
		own: own,
	}
}

func (b *baseline[K, V]) set(m []byte, s float64) { b.put(b.key(m), V(s)) }

func (b *baseline[K, V]) put(k K, v V) {
	if old, ok := b.idx[k]; ok {
		if old == v {
			return
		}
		b.tr.Delete(item[K, V]{old, k})
	}
	k = b.own(k)
	b.tr.Set(item[K, V]{v, k})
	b.idx[k] = v
}

func (b *baseline[K, V]) incr(m []byte, d float64) {
	k := b.key(m)
	b.put(k, b.idx[k]+V(d))
}

func (b *baseline[K, V]) remove(m []byte) {
	k := b.key(m)
	if old, ok := b.idx[k]; ok {
		b.tr.Delete(item[K, V]{old, k})
		delete(b.idx, k)
	}
}

func (b *baseline[K, V]) rank(m []byte) int {
	k := b.key(m)
	it := item[K, V]{b.idx[k], k}
	return sort.Search(b.tr.Len(), func(i int) bool {
		x, _ := b.tr.GetAt(i)
		return !lessItem(x, it)
	})
}

func heapNow() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func (b *baseline[K, V]) mark() { b.heap0 = heapNow() }

func (b *baseline[K, V]) bytesPerMember() float64 {
	return float64(heapNow()-b.heap0) / float64(len(b.idx))
}
