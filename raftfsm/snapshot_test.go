package raftfsm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"hash/crc32"

	"github.com/hashicorp/raft"
)

func zadd(key, member string) []byte {
	e := &Entry{Op: OpCommand, Proto: 2, Time: 1, Commands: []Command{{Argv: [][]byte{[]byte("zadd"), []byte(key), []byte("1"), []byte(member)}}}}
	return e.Encode(nil)
}

// A snapshot carries the index it was taken at, and restoring it makes
// that index applied: a follower that catches up by snapshot install must
// not wait for a later entry before serving reads at the snapshot's index.
func TestSnapshotCarriesAppliedIndex(t *testing.T) {
	src := New()
	src.ApplyBatch([]*raft.Log{
		{Index: 7, Type: raft.LogCommand, Data: zadd("k", "a")},
		{Index: 8, Type: raft.LogCommand, Data: zadd("k", "b")},
	})
	snap, err := src.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	s := snap.(*snapshot)
	if err := WriteSnapshot(&buf, s.ks, s.now, s.index); err != nil {
		t.Fatal(err)
	}

	dst := New()
	waiting := dst.WaitApplied(8)
	later := dst.WaitApplied(9)
	if err := dst.Restore(nopCloser{bytes.NewReader(buf.Bytes())}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-waiting:
	case <-time.After(5 * time.Second):
		t.Fatal("a waiter for the snapshot's index was not released by Restore")
	}
	select {
	case <-later:
		t.Fatal("a waiter for a later index was released")
	default:
	}
	if got := dst.Applied(); got != 8 {
		t.Fatalf("applied after restore = %d, want 8", got)
	}
	ks := dst.KS()
	if n := ks.DB(0).Len(); n != 1 {
		t.Fatalf("restored %d keys, want 1", n)
	}
}

// Version 1 snapshots (no index) still restore, as index 0.
func TestSnapshotReadsVersion1(t *testing.T) {
	src := New()
	src.ApplyBatch([]*raft.Log{{Index: 3, Type: raft.LogCommand, Data: zadd("k", "a")}})
	var buf bytes.Buffer
	if err := WriteSnapshot(&buf, src.KS(), 5, 3); err != nil {
		t.Fatal(err)
	}
	// Rewrite as version 1: drop the index varint and fix the checksum.
	b := buf.Bytes()
	v1 := append([]byte(nil), snapshotMagicV1[:]...)
	v1 = append(v1, b[8])              // clock 5: one varint byte
	v1 = append(v1, b[10:len(b)-4]...) // skip index 3: one byte
	v1 = binary.LittleEndian.AppendUint32(v1, crc32.Checksum(v1, castagnoli))
	out := bytes.NewReader(v1)
	ks, now, index, err := ReadSnapshot(out)
	if err != nil {
		t.Fatal(err)
	}
	if now != 5 || index != 0 || ks.DB(0).Len() != 1 {
		t.Fatalf("v1 snapshot: now %d index %d keys %d", now, index, ks.DB(0).Len())
	}
}

func TestSnapshotRejectsCorruption(t *testing.T) {
	src := New()
	src.ApplyBatch([]*raft.Log{{Index: 3, Type: raft.LogCommand, Data: zadd("k", "a")}})
	var buf bytes.Buffer
	if err := WriteSnapshot(&buf, src.KS(), 5, 3); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	b[len(b)/2] ^= 0x40
	if _, _, _, err := ReadSnapshot(bytes.NewReader(b)); err == nil {
		t.Fatal("a corrupted snapshot was accepted")
	} else if !errors.Is(err, ErrCorrupt) && err.Error() == "" {
		t.Fatal(err)
	}
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }
