package raftfsm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"hash/crc32"

	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/keyspace"
)

func zadd(key, member string) []byte {
	return CommandEntry(1, 0, "zadd", key, "1", member).Encode(nil)
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
	if err := WriteSnapshot(&buf, s.st); err != nil {
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

// olderSnapshot writes ks in an older snapshot format: version 1 (no
// index) or 2 (no ACL section).
func olderSnapshot(t *testing.T, version byte, ks *keyspace.Keyspace, now int64, index uint64) []byte {
	t.Helper()
	b := []byte{'G', 'O', 'B', 'L', 'I', 'N', 'S', version}
	b = binary.AppendVarint(b, now)
	if version == 2 {
		b = binary.AppendUvarint(b, index)
	}
	var ksb bytes.Buffer
	if err := ks.Encode(&ksb); err != nil {
		t.Fatal(err)
	}
	b = append(b, ksb.Bytes()...)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// Version 1 snapshots (no index) still restore, as index 0; version 2
// ones (no ACL section) as a state without users.
func TestSnapshotReadsOlderVersions(t *testing.T) {
	src := New()
	src.ApplyBatch([]*raft.Log{{Index: 3, Type: raft.LogCommand, Data: zadd("k", "a")}})
	for _, v := range []byte{1, 2} {
		st, err := ReadSnapshot(bytes.NewReader(olderSnapshot(t, v, src.KS(), 5, 3)))
		if err != nil {
			t.Fatalf("version %d: %v", v, err)
		}
		wantIndex := uint64(3)
		if v == 1 {
			wantIndex = 0
		}
		if st.Now != 5 || st.Index != wantIndex || st.KS.DB(0).Len() != 1 || st.ACLUsers() != nil {
			t.Fatalf("version %d snapshot: now %d index %d keys %d users %v", v, st.Now, st.Index, st.KS.DB(0).Len(), st.ACLUsers())
		}
	}
}

func TestSnapshotRejectsCorruption(t *testing.T) {
	src := New()
	src.ApplyBatch([]*raft.Log{{Index: 3, Type: raft.LogCommand, Data: zadd("k", "a")}})
	var buf bytes.Buffer
	if err := WriteSnapshot(&buf, &State{KS: src.KS(), Now: 5, Index: 3}); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	b[len(b)/2] ^= 0x40
	if _, err := ReadSnapshot(bytes.NewReader(b)); err == nil {
		t.Fatal("a corrupted snapshot was accepted")
	} else if !errors.Is(err, ErrCorrupt) && err.Error() == "" {
		t.Fatal(err)
	}
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }
