package keyspace

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/goblindb/goblin/packed"
)

// dumpKeys renders every database's keys in SCAN order with their
// expiry, version and entries, as a view's keys are rendered by dumpView.
func dumpKeys(ks *Keyspace) string {
	var b strings.Builder
	for i := range NumDBs {
		fmt.Fprintf(&b, "db%d %d keys\n", i, ks.DB(i).Len())
		ks.DB(i).Scan(0, math.MaxInt, func(k string, e *Entry) {
			dumpKey(&b, k, e.ExpireAt, e.Version, e.Z.Layout(), func(fn func([]byte, float64) bool) { e.Z.Range(0, e.Z.Len(), false, fn) })
		})
	}
	return b.String()
}

func dumpView(v *View) string {
	var b strings.Builder
	for i := range NumDBs {
		fmt.Fprintf(&b, "db%d %d keys\n", i, v.Len(i))
		v.Each(i, func(e *ViewEntry) { dumpKey(&b, e.Key, e.ExpireAt, e.Version, e.Z.Layout(), e.Z.Each) })
	}
	return b.String()
}

// dumpKey renders one key: its name, expiry, version, layout and the
// entries each visits.
func dumpKey(b *strings.Builder, key string, exp int64, ver uint64, l packed.Layout, each func(func(m []byte, s float64) bool)) {
	fmt.Fprintf(b, "%q exp=%d v=%d %v:", key, exp, ver, l)
	each(func(m []byte, s float64) bool {
		fmt.Fprintf(b, " %q=%x", m, math.Float64bits(s))
		return true
	})
	b.WriteByte('\n')
}

// dumpRest renders what dumpKeys leaves out: flush indexes, tombstones
// (and which were expiries), declarations, rules and the horizon.
func dumpRest(ks *Keyspace) string {
	var b strings.Builder
	fmt.Fprintf(&b, "rules=%v horizon=%d flushed=%v\n", ks.rules, ks.horizon, ks.flushed)
	for i, d := range ks.dbs {
		var lines []string
		for k, idx := range d.tombstones {
			_, exp := d.expiredDel[k]
			lines = append(lines, fmt.Sprintf("t %q %d %v", k, idx, exp))
		}
		for k, l := range d.declared {
			lines = append(lines, fmt.Sprintf("d %q %v", k, l))
		}
		sort.Strings(lines)
		fmt.Fprintf(&b, "db%d %s\n", i, strings.Join(lines, ","))
	}
	return b.String()
}

// A keyspace view is frozen: a randomized test takes views (with a deep
// copy, Clone, at the same moment) while the keyspace goes on with
// writes to sets, new and deleted keys, expiries, declarations and
// flushes, and checks that each view reads (Each, in SCAN order) and
// encodes exactly as its copy.
func TestViewIsFrozen(t *testing.T) {
	r := testutil.Rand(t, 3)
	ks := New()
	ks.SetRules(Rules{{Pattern: "p*", Layout: packed.Int32Float32}})
	type frozen struct {
		v    *View
		copy *Keyspace
	}
	var views []frozen
	check := func(op int) {
		t.Helper()
		for j, f := range views {
			if got, want := dumpView(f.v), dumpKeys(f.copy); got != want {
				t.Fatalf("op %d: view %d reads\n%s\nwant\n%s", op, j, got, want)
			}
			var buf bytes.Buffer
			if err := f.v.Encode(&buf); err != nil {
				t.Fatal(err)
			}
			dec, err := Decode(bufio.NewReader(&buf))
			if err != nil {
				t.Fatalf("op %d: view %d: %v", op, j, err)
			}
			if dumpKeys(dec) != dumpKeys(f.copy) || dumpRest(dec) != dumpRest(f.copy) {
				t.Fatalf("op %d: view %d decodes to\n%s%s\nwant\n%s%s", op, j, dumpKeys(dec), dumpRest(dec), dumpKeys(f.copy), dumpRest(f.copy))
			}
		}
	}
	idx := uint64(1)
	for op := range 3000 {
		idx++
		db := ks.DB(r.IntN(3))
		key := []byte([]string{"p", "s"}[r.IntN(2)] + strconv.Itoa(r.IntN(40)))
		switch x := r.IntN(100); {
		case x < 70:
			e := db.GetForWrite(key, 0, idx)
			if e == nil {
				l := packed.Standard
				if key[0] == 'p' {
					l = packed.Int32Float32
				}
				e = &Entry{Z: packed.NewWithCapacity(l, 4+r.IntN(8))}
				db.Set(key, e, idx)
			}
			for range 1 + r.IntN(20) {
				e.Z.Add([]byte(strconv.Itoa(r.IntN(300))), float64(r.IntN(50)), 0)
			}
			db.Touch(key, idx)
		case x < 85:
			if e := db.GetForWrite(key, 0, idx); e != nil {
				for range 1 + r.IntN(20) {
					e.Z.Remove([]byte(strconv.Itoa(r.IntN(300))))
				}
				if e.Z.Len() == 0 {
					db.Delete(key, idx)
				} else {
					db.Touch(key, idx)
				}
			}
		case x < 90:
			db.Delete(key, idx)
		case x < 93:
			if db.Peek(key) != nil {
				db.SetExpire(key, int64(1+r.IntN(1000)), idx)
			}
		case x < 95:
			if db.Peek(key) != nil {
				db.DeleteExpired(key, idx)
			}
		case x < 96:
			db.Declare([]byte("d"+strconv.Itoa(r.IntN(10))), packed.Int64Float64)
		case x < 97 && r.IntN(5) == 0:
			ks.Flush(r.IntN(3), idx, 500)
		case x < 98:
			views = append(views, frozen{ks.Snapshot(), ks.Clone()})
			if len(views) > 3 {
				views = views[1:]
			}
		case x < 99 && r.IntN(4) == 0:
			check(op)
		}
	}
	check(3000)
}
