package node

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
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

// Damage deep in a raft-boltdb log, where a start reads only once it
// reads every entry (no snapshot: snapshots.go reads them before Raft,
// which panics at any error), stops the node with an error that names the
// file, not a Go panic: in each leaf page of entries but the first and
// the last, the second entry's value length is made to run off the page.
func TestDamagedBoltLogPagesRefused(t *testing.T) {
	dir := t.TempDir()
	n := startFaulty(t, dir, LogStoreBolt, FsyncAlways, nil)
	writeMembers(t, n, 0, 50)
	n.Close()
	p := filepath.Join(dir, boltLogFile)
	orig, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	// bbolt's layout: a page starts with its id (8 bytes), flags (2),
	// element count (2) and overflow (4); a leaf's elements follow, each
	// flags, position (from the element), key size and value size (4 bytes
	// each). Raft's entries are keyed by their index, 8 bytes big-endian.
	const page, leaf = 4096, 0x02
	type leafPage struct{ off, first int }
	var leaves []leafPage
	for off := 2 * page; off+page <= len(orig); off += page {
		b := orig[off : off+page]
		elem := 16
		if binary.LittleEndian.Uint16(b[8:]) != leaf || binary.LittleEndian.Uint16(b[10:]) < 2 ||
			binary.LittleEndian.Uint32(b[elem+8:]) != 8 {
			continue
		}
		key := elem + int(binary.LittleEndian.Uint32(b[elem+4:]))
		leaves = append(leaves, leafPage{off, int(binary.BigEndian.Uint64(b[key:]))})
	}
	sort.Slice(leaves, func(i, j int) bool { return leaves[i].first < leaves[j].first })
	if len(leaves) < 3 {
		t.Fatalf("%d leaf pages of entries: too few to damage one between the first and the last", len(leaves))
	}
	for _, l := range leaves[1 : len(leaves)-1] {
		b := append([]byte(nil), orig...)
		binary.LittleEndian.PutUint32(b[l.off+16+16+12:], 0x7fffffff)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		wantStartError(t, dir, boltLogFile, "is damaged", fmt.Sprintf("entry %d: ", l.first+1))
	}
}
