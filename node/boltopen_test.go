package node

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"
)

// Damage in a bolt file (the stable store; the log with --log-store bolt)
// stops the node with an error that names the file, not with a Go panic
// or a memory fault; a single node whose stable store was damaged and
// then removed starts again with its data.
func TestDamagedBoltFilesRefused(t *testing.T) {
	damage := map[string]func(p string) error{
		"truncated": func(p string) error { return os.Truncate(p, 10000) },
		"page 3 flipped": func(p string) error {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for i := 3 * 4096; i < 3*4096+64 && i < len(b); i++ {
				b[i] ^= 0xff
			}
			return os.WriteFile(p, b, 0o644)
		},
	}
	for name, f := range damage {
		t.Run("stable/"+name, func(t *testing.T) {
			dir := t.TempDir()
			n := startFaulty(t, dir, LogStoreWAL, FsyncAlways, nil)
			writeMembers(t, n, 0, 50)
			n.Close()
			p := filepath.Join(dir, "raft-stable.db")
			if err := f(p); err != nil {
				t.Fatal(err)
			}
			wantStartError(t, dir, "raft-stable.db", "move the data directory aside")
			os.Remove(p)
			n = startFaulty(t, dir, LogStoreAuto, FsyncAlways, nil)
			checkMembers(t, n, 50)
		})
		t.Run("log/"+name, func(t *testing.T) {
			dir := t.TempDir()
			n := startFaulty(t, dir, LogStoreBolt, FsyncAlways, nil)
			writeMembers(t, n, 0, 50)
			n.Close()
			if err := f(filepath.Join(dir, boltLogFile)); err != nil {
				t.Fatal(err)
			}
			wantStartError(t, dir, boltLogFile, "is damaged")
		})
	}
}

// bbolt's layout: a page starts with its id (8 bytes), flags (2), element
// count (2) and overflow (4); a leaf's elements follow, each flags,
// position (from the element), key size and value size (4 bytes each), a
// branch's each position, key size (4 bytes each) and child page (8).
// Raft's entries are keyed by their index, 8 bytes big-endian.
const (
	testBoltPage   = 4096
	testBoltBranch = 0x01
	testBoltLeaf   = 0x02
)

// boltPage is a page of a bolt file: its offset, and for a leaf of Raft
// entries the first entry's index.
type boltPage struct{ off, first int }

// boltPages finds the branch pages of a bolt file whose bytes are b, and
// its leaf pages of at least two Raft entries (by their first index);
// pages bbolt lists as free (older copies of pages) are left out.
func boltPages(t *testing.T, b []byte) (branches, leaves []boltPage) {
	t.Helper()
	// Read-only, bbolt loads no freelist: a copy is opened to write.
	cp := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(cp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := bbolt.Open(cp, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	free := map[int]bool{}
	if err := db.View(func(tx *bbolt.Tx) error {
		for id := 2; id*testBoltPage < len(b); id++ {
			info, err := tx.Page(id)
			if err != nil {
				return err
			}
			free[id] = info != nil && info.Type == "free"
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for off := 2 * testBoltPage; off+testBoltPage <= len(b); off += testBoltPage {
		if free[off/testBoltPage] {
			continue
		}
		p := b[off : off+testBoltPage]
		flags, count := binary.LittleEndian.Uint16(p[8:]), binary.LittleEndian.Uint16(p[10:])
		const elem = 16
		switch {
		case flags == testBoltBranch && count >= 2:
			branches = append(branches, boltPage{off: off})
		case flags == testBoltLeaf && count >= 2 && binary.LittleEndian.Uint32(p[elem+8:]) == 8:
			key := elem + int(binary.LittleEndian.Uint32(p[elem+4:]))
			leaves = append(leaves, boltPage{off, int(binary.BigEndian.Uint64(p[key:]))})
		}
	}
	sort.Slice(leaves, func(i, j int) bool { return leaves[i].first < leaves[j].first })
	return branches, leaves
}

// boltLogOf writes 50 members through a single node with a raft-boltdb
// log, stops it, and returns the log's path and bytes, and its branch and
// leaf pages (boltPages).
func boltLogOf(t *testing.T, dir string) (path string, b []byte, branches, leaves []boltPage) {
	t.Helper()
	n := startFaulty(t, dir, LogStoreBolt, FsyncAlways, nil)
	writeMembers(t, n, 0, 50)
	n.Close()
	path = filepath.Join(dir, boltLogFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	branches, leaves = boltPages(t, b)
	return path, b, branches, leaves
}

// secondValueLen is where a leaf page's second element keeps its value
// length: after the page header (16 bytes), the first element (16), and
// the second's flags, position and key size (12).
func (l boltPage) secondValueLen() int { return l.off + 16 + 16 + 12 }

// Damage inside a raft-boltdb log's pages deep in, where bbolt reads only
// when a start without a snapshot reads every entry, is found by the walk
// of the file's pages before bbolt opens it: in each leaf page of entries
// but the first and the last, the second entry's value length is made to
// run off the page, and the start is refused naming the file and the
// page.
func TestDamagedBoltLogPagesRefused(t *testing.T) {
	dir := t.TempDir()
	p, orig, _, leaves := boltLogOf(t, dir)
	if len(leaves) < 3 {
		t.Fatalf("%d leaf pages of entries: too few to damage one between the first and the last", len(leaves))
	}
	for _, l := range leaves[1 : len(leaves)-1] {
		b := append([]byte(nil), orig...)
		binary.LittleEndian.PutUint32(b[l.secondValueLen():], 0x7fffffff)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		wantStartError(t, dir, boltLogFile, "is damaged", fmt.Sprintf("page %d: element 1 runs off it", l.off/testBoltPage))
	}
}

// A raft-boltdb log whose page links are damaged is refused at the start
// with an error naming the file: a branch that links to itself or to an
// ancestor (bbolt searched it for ever, or recursed until the stack
// overflowed), to a page another link reaches, to a page past the last,
// or to a page that is not a branch or a leaf; a freelist page that is
// not one, or that counts billions of free pages (bbolt allocated a slice
// of that count and the process died out of memory).
func TestBoltLogPageLinksChecked(t *testing.T) {
	dir := t.TempDir()
	p, orig, branches, leaves := boltLogOf(t, dir)
	if len(branches) == 0 || len(leaves) < 2 {
		t.Fatalf("%d branch pages, %d leaves: no tree to damage", len(branches), len(leaves))
	}
	br := branches[0].off
	self := uint64(br / testBoltPage)
	// A branch's element i names its child at 16 + 16*i + 8.
	child := func(b []byte, i int) []byte { return b[br+16+16*i+8:] }
	cases := []struct {
		name, want string
		damage     func(b []byte)
	}{
		{"loop", fmt.Sprintf("page %d is reached twice", self), func(b []byte) {
			binary.LittleEndian.PutUint64(child(b, 1), self)
		}},
		{"join", "is reached twice", func(b []byte) {
			copy(child(b, 1)[:8], child(b, 0)[:8])
		}},
		{"past the last page", "a link names page 1099511627776, outside the tree's pages", func(b []byte) {
			binary.LittleEndian.PutUint64(child(b, 0), 1<<40)
		}},
		{"a meta page", "a link names page 1, outside", func(b []byte) {
			binary.LittleEndian.PutUint64(child(b, 0), 1)
		}},
		{"not a tree page", "is not a branch or leaf page (flags 0x10)", func(b []byte) {
			// The freelist page: the meta's (16 + 32 bytes into either meta
			// page) may be either one's; both are pointed at.
			free := binary.LittleEndian.Uint64(b[16+32:])
			binary.LittleEndian.PutUint64(child(b, 0), free)
			if free2 := binary.LittleEndian.Uint64(b[testBoltPage+16+32:]); free2 != free {
				binary.LittleEndian.PutUint64(child(b, 1), free2)
			}
		}},
	}
	// Each meta page names a freelist page (16 + 32 bytes in): both are
	// damaged alike, as either meta may be the one in use.
	freelists := func(b []byte, fn func(page []byte)) {
		for _, meta := range []int{0, testBoltPage} {
			at := int(binary.LittleEndian.Uint64(b[meta+16+32:])) * testBoltPage
			fn(b[at : at+testBoltPage])
		}
	}
	cases = append(cases, []struct {
		name, want string
		damage     func(b []byte)
	}{
		{"freelist not one", "is not a freelist page (flags 0x2)", func(b []byte) {
			freelists(b, func(p []byte) { binary.LittleEndian.PutUint16(p[8:], testBoltLeaf) })
		}},
		{"freelist counting billions", "counts 68719476736 free pages, more than it holds", func(b []byte) {
			freelists(b, func(p []byte) {
				binary.LittleEndian.PutUint16(p[10:], 0xFFFF)
				binary.LittleEndian.PutUint64(p[16:], 1<<36)
			})
		}},
	}...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := append([]byte(nil), orig...)
			c.damage(b)
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			wantStartError(t, dir, boltLogFile, "is damaged", c.want)
		})
	}
	// Undamaged, the file passes and the node starts with its members.
	if err := os.WriteFile(p, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := checkBoltPages(p); err != nil {
		t.Fatalf("the undamaged log: %v", err)
	}
	n := startFaulty(t, dir, LogStoreBolt, FsyncAlways, nil)
	checkMembers(t, n, 50)
}

// An entry of an open raft-boltdb log damaged after the start (the file
// changed under the node) is read as an error naming the file, not as a
// Go panic or a memory fault.
func TestBoltLogReadsTurnFaultsIntoErrors(t *testing.T) {
	dir := t.TempDir()
	p, _, _, leaves := boltLogOf(t, dir)
	if len(leaves) < 2 {
		t.Fatalf("%d leaf pages of entries", len(leaves))
	}
	s, err := openBolt(raftboltdb.Options{Path: p})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	log := &boltLog{BoltStore: s, path: p}
	l := leaves[len(leaves)-1]
	var e raft.Log
	if err := log.GetLog(uint64(l.first+1), &e); err != nil {
		t.Fatalf("entry %d before the damage: %v", l.first+1, err)
	}
	// bbolt maps the file shared: what is written to it shows in the map.
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	var v [4]byte
	binary.LittleEndian.PutUint32(v[:], 0x7fffffff)
	_, err = f.WriteAt(v[:], int64(l.secondValueLen()))
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	err = log.GetLog(uint64(l.first+1), &e)
	if err == nil || !strings.Contains(err.Error(), p+" is damaged") {
		t.Fatalf("entry %d after the damage: %v, want an error naming %s as damaged", l.first+1, err, p)
	}
	t.Logf("read refused: %v", err)
}

// The walk of a bolt file's pages returns, with or without an error, on
// any damage: random bytes of a raft-boltdb log overwritten, a thousand
// times (the seed is printed).
func TestBoltPageWalkSurvivesRandomDamage(t *testing.T) {
	dir := t.TempDir()
	_, orig, _, _ := boltLogOf(t, dir)
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(uint64(seed), 1))
	p := filepath.Join(t.TempDir(), "damaged.db")
	refused := 0
	for range 1000 {
		b := append([]byte(nil), orig...)
		for range 1 + r.IntN(8) {
			at := r.IntN(len(b))
			if r.IntN(2) == 0 {
				at = 2*testBoltPage + r.IntN(len(b)-2*testBoltPage) // a tree page, not a meta
				at -= at % testBoltPage
				at += r.IntN(64) // its header or first elements
			}
			b[at] = byte(r.Uint32())
		}
		if r.IntN(8) == 0 {
			b = b[:r.IntN(len(b))]
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if checkBoltPages(p) != nil {
			refused++
		}
	}
	t.Logf("%d of 1000 damaged files refused by the walk", refused)
	if refused == 0 {
		t.Fatal("no damage was found: the walk checks nothing")
	}
}
