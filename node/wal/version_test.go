package wal

import (
	"encoding/binary"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/hashicorp/raft"
)

// writeV1Segment writes a segment in the version 1 format (as earlier
// builds did): entries from base in batches of up to 5.
func writeV1Segment(t *testing.T, r *rand.Rand, dir string, m model, base, last uint64) {
	t.Helper()
	b := make([]byte, segHeaderLenV1)
	copy(b, segmentMagicPrefix)
	b[7] = byte(v1)
	binary.LittleEndian.PutUint64(b[8:], base)
	for i := base; i <= last; {
		n := min(uint64(1+r.IntN(5)), last-i+1)
		var logs []*raft.Log
		for k := range n {
			e := mkLog(r, i+k, 1)
			m[e.Index] = e
			logs = append(logs, e)
		}
		v2batch, _ := appendBatch(nil, logs, 0, nil)
		hdr := make([]byte, batchHdrLenV1)
		putBatchHeader(hdr, v1, uint32(len(v2batch)-batchHdrLenV2), uint32(n), 0)
		b = append(b, hdr...)
		b = append(b, v2batch[batchHdrLenV2:]...)
		i += n
	}
	if err := os.WriteFile(filepath.Join(dir, segmentName(base)), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestVersion1Log: a log written by an earlier build (version 1
// segments, no manifest) opens, is appended to in a new version 2
// segment, cut back and reopened; its torn tail is cut.
func TestVersion1Log(t *testing.T) {
	r := testutil.Rand(t, 0)
	dir := t.TempDir()
	m := model{}
	writeV1Segment(t, r, dir, m, 1, 100)
	writeV1Segment(t, r, dir, m, 101, 200)
	torn, tornModel := copyDir(t, dir), maps.Clone(m)

	l := open(t, dir, Options{SyncEveryBatch: true})
	checkLog(t, l, m, 1, 200)
	appendRandom(t, r, l, m, 201, 250, 1)
	if n := len(segFiles(t, dir)); n != 3 {
		t.Fatalf("%d segments, want the 2 old ones and a new one", n)
	}
	// A suffix cut inside a version 1 segment rewrites its batch header
	// in that format.
	if err := l.DeleteRange(150, 250); err != nil {
		t.Fatal(err)
	}
	appendRandom(t, r, l, m, 150, 170, 2)
	l.Close()
	l = open(t, dir, Options{})
	checkLog(t, l, m, 1, 170)
	l.Close()

	// The old format's tail, cut anywhere in its last batch, or zeroed.
	p := filepath.Join(torn, segmentName(101))
	full, _ := os.ReadFile(p)
	for cut := len(full) - 1; cut > len(full)-60; cut-- {
		d := copyDir(t, torn)
		os.WriteFile(filepath.Join(d, segmentName(101)), full[:cut], 0o644)
		l := open(t, d, Options{})
		la, _ := l.LastIndex()
		if la < 190 || la >= 200 {
			t.Fatalf("cut at %d: last = %d", cut, la)
		}
		checkLog(t, l, tornModel, 1, la)
		l.Close()
	}
	// Damage in the older segment is corruption.
	d := copyDir(t, torn)
	p = filepath.Join(d, segmentName(1))
	b, _ := os.ReadFile(p)
	b[segHeaderLenV1+batchHdrLenV1+12] ^= 1
	os.WriteFile(p, b, 0o644)
	wantCorrupt(t, d, "sealed")
}

// A version 2 segment whose version byte is damaged into 1 is corrupt:
// read as version 1, its batches would look like a torn tail and every
// synced entry would be cut.
func TestDamagedVersionByteIsCorrupt(t *testing.T) {
	fw := newFinalWrite(t, testutil.Rand(t, 0), nil, nil)
	d := copyDir(t, fw.post)
	setByte(t, filepath.Join(d, fw.name), 7, byte(v1))
	wantCorrupt(t, d, "version byte is damaged")
}

// A version 1 segment (from an earlier build) whose version byte is
// damaged into 2 is corrupt too, not a segment of torn batches.
func TestDamagedVersion1ByteIsCorrupt(t *testing.T) {
	dir := t.TempDir()
	writeV1Segment(t, rand.New(rand.NewPCG(5, 6)), dir, model{}, 1, 20)
	setByte(t, filepath.Join(dir, segmentName(1)), 7, byte(v2))
	wantCorrupt(t, dir, "version byte is damaged")
}

// setByte sets the byte at offset at of the file at path to v.
func setByte(t *testing.T, path string, at int64, v byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte{v}, at); err != nil {
		t.Fatal(err)
	}
}
