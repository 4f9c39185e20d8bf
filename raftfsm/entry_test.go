package raftfsm

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

func sampleEntries() []*Entry {
	return []*Entry{
		{Op: OpNoop},
		{Op: OpCommand, Time: 1700000000123, Proto: 2, Commands: []Command{{DB: 3, Argv: [][]byte{[]byte("ZADD"), []byte("k"), []byte("1"), []byte("")}}}},
		{Op: OpCommand, Time: -5, Proto: 3, Double70: true, Commands: []Command{{DB: 15, Argv: [][]byte{[]byte("PING")}}}},
		{Op: OpMulti, Time: 42, Proto: 3, WatchIndex: 99,
			Watched:  []WatchedKey{{DB: 1, Key: []byte("w"), Expired: true}, {DB: 0, Key: []byte("")}, {DB: 2, Key: []byte("x"), Absent: true, Index: 300}},
			Commands: []Command{{DB: 0, Argv: [][]byte{[]byte("ZADD"), []byte("a"), []byte("1"), []byte("x")}}, {DB: 2, Argv: [][]byte{[]byte("DEL"), []byte("b")}}}},
		{Op: OpMulti, Time: 1, Proto: 2, Commands: []Command{}, Watched: []WatchedKey{}},
		{Op: OpExpire, Time: 77, Expired: []ExpiredKey{{DB: 4, Key: []byte("gone"), At: 76}}},
		{Op: OpRules, Rules: []Rule{{Pattern: "wiki:*", Layout: 1}, {Pattern: "u:*", Layout: 6}}},
	}
}

func TestEntryRoundTrip(t *testing.T) {
	for _, e := range sampleEntries() {
		data := e.Encode(nil)
		got, err := Decode(data)
		if err != nil {
			t.Fatalf("%v: decode: %v", e.Op, err)
		}
		if !reflect.DeepEqual(normalize(got), normalize(e)) {
			t.Errorf("%v: round trip\n got %+v\nwant %+v", e.Op, got, e)
		}
		if !bytes.Equal(got.Encode(nil), data) {
			t.Errorf("%v: re-encoding differs", e.Op)
		}
	}
}

// TestRestamp: a command entry restamped is the entry with its new time,
// in the bytes Encode writes for it, with and without a proposal header
// and for times of every varint width; other ops and headers cut short
// are left to the caller.
func TestRestamp(t *testing.T) {
	times := []int64{0, 1, -1, 63, -64, 64, 1700000000123, -1700000000123, 1<<62 + 5, -1 << 63}
	for _, e := range seedEntries() {
		for _, header := range []bool{false, true} {
			h := *e
			if header {
				h.Term, h.Proposal = 9, 1<<40
			}
			data := h.Encode(nil)
			for _, at := range times {
				got, ok := Restamp(data, at)
				command := e.Op == OpCommand || e.Op == OpBatch || e.Op == OpMulti
				if ok != command {
					t.Fatalf("%v: Restamp ok %v", e.Op, ok)
				}
				if !ok {
					continue
				}
				want := h
				want.Time = at
				if !bytes.Equal(got, want.Encode(nil)) {
					t.Fatalf("%v at %d: restamped %x, want %x", e.Op, at, got, want.Encode(nil))
				}
			}
			for cut := range min(len(data), 22) {
				if out, ok := Restamp(data[:cut], 5); ok {
					if _, err := Decode(out); err == nil {
						t.Fatalf("%v cut at %d: restamped into an entry that decodes", e.Op, cut)
					}
				}
			}
		}
	}
}

// checkRestamp checks Restamp against e, data decoded: a command entry
// restamped decodes as e with the new time, and is refused otherwise.
func checkRestamp(t *testing.T, data []byte, e *Entry) {
	t.Helper()
	got, ok := Restamp(data, e.Time+1)
	if command := e.Op == OpCommand || e.Op == OpBatch || e.Op == OpMulti; ok != command {
		t.Fatalf("%v: Restamp ok %v", e.Op, ok)
	}
	if !ok {
		return
	}
	again, err := Decode(got)
	if err != nil {
		t.Fatalf("restamped entry does not decode: %v", err)
	}
	want := *e
	want.Time++
	if !reflect.DeepEqual(normalize(again), normalize(&want)) {
		t.Fatalf("restamped entry differs:\n%+v\n%+v", &want, again)
	}
}

// normalize makes empty and nil slices compare equal.
func normalize(e *Entry) *Entry {
	c := *e
	if len(c.Commands) == 0 {
		c.Commands = nil
	}
	if len(c.Watched) == 0 {
		c.Watched = nil
	}
	if len(c.Expired) == 0 {
		c.Expired = nil
	}
	if len(c.Rules) == 0 {
		c.Rules = nil
	}
	return &c
}

func TestDecodeRejectsCorruption(t *testing.T) {
	for _, e := range sampleEntries() {
		data := e.Encode(nil)
		// Every truncation is corrupt (the empty-payload noop aside).
		for i := 0; i < len(data); i++ {
			if _, err := Decode(data[:i]); err == nil {
				t.Errorf("%v truncated to %d bytes decoded without error", e.Op, i)
			}
		}
		// Trailing bytes are corrupt too.
		if _, err := Decode(append(data, 0)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%v with a trailing byte: %v", e.Op, err)
		}
	}
	bad := [][]byte{
		{2, byte(OpNoop)},                // unknown version
		{Version, 200},                   // unknown op
		{Version, byte(OpCommand), 4, 0}, // protocol 4
		{Version, byte(OpRules), 1, 1, 'x', 99},
		{Version, byte(OpCommand), 2, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f}, // absurd count
	}
	for _, b := range bad {
		if _, err := Decode(b); err == nil {
			t.Errorf("Decode(%v) succeeded", b)
		}
	}
}
