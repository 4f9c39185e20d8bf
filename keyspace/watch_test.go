package keyspace

import (
	"testing"

	"github.com/goblindb/goblin/packed"
)

func put(ks *Keyspace, key string, expireAt int64, idx uint64) {
	z := packed.New(packed.Standard)
	z.Add([]byte("m"), 1, 0)
	ks.DB(0).Set([]byte(key), &Entry{Z: z, ExpireAt: expireAt}, idx)
}

// TestWatchChanged walks Redis's WATCH rules through the keyspace's
// records: each case watches at index 10 (now 1000) and changes things at
// index 11 and later.
func TestWatchChanged(t *testing.T) {
	const now = 1000
	cases := []struct {
		name   string
		before func(ks *Keyspace) // state when watched
		after  func(ks *Keyspace) // changes after the watch
		at     int64              // clock at EXEC
		want   bool
	}{
		{"untouched key", func(ks *Keyspace) { put(ks, "k", 0, 5) }, func(*Keyspace) {}, now, false},
		{"absent and untouched", func(*Keyspace) {}, func(*Keyspace) {}, now, false},
		{"written", func(ks *Keyspace) { put(ks, "k", 0, 5) }, func(ks *Keyspace) { ks.DB(0).Touch([]byte("k"), 11) }, now, true},
		{"created", func(*Keyspace) {}, func(ks *Keyspace) { put(ks, "k", 0, 11) }, now, true},
		{"deleted", func(ks *Keyspace) { put(ks, "k", 0, 5) }, func(ks *Keyspace) { ks.DB(0).Delete([]byte("k"), 11) }, now, true},
		{"created and deleted", func(*Keyspace) {}, func(ks *Keyspace) {
			put(ks, "k", 0, 11)
			ks.DB(0).Delete([]byte("k"), 12)
		}, now, true},
		{"expired since", func(ks *Keyspace) { put(ks, "k", 1500, 5) }, func(*Keyspace) {}, 2000, true},
		{"deleted by expiry since", func(ks *Keyspace) { put(ks, "k", 1500, 5) }, func(ks *Keyspace) {
			ks.DB(0).DeleteExpired([]byte("k"), 11)
		}, 2000, true},
		{"already expired, then deleted by expiry", func(ks *Keyspace) { put(ks, "k", 900, 5) }, func(ks *Keyspace) {
			ks.DB(0).DeleteExpired([]byte("k"), 11)
		}, now, false},
		{"already expired, still there", func(ks *Keyspace) { put(ks, "k", 900, 5) }, func(*Keyspace) {}, now, false},
		{"already expired, then written anew", func(ks *Keyspace) { put(ks, "k", 900, 5) }, func(ks *Keyspace) {
			ks.DB(0).DeleteExpired([]byte("k"), 11)
			put(ks, "k", 0, 12)
		}, now, true},
		{"flushed while it existed", func(ks *Keyspace) { put(ks, "k", 0, 5) }, func(ks *Keyspace) { ks.Flush(0, 11, now) }, now, true},
		{"flushed, never existed", func(*Keyspace) {}, func(ks *Keyspace) { ks.Flush(0, 11, now) }, now, false},
		{"flushed after being created", func(*Keyspace) {}, func(ks *Keyspace) {
			put(ks, "k", 0, 11)
			ks.FlushAll(12, now)
		}, now, true},
		{"deleted, then the database flushed", func(ks *Keyspace) { put(ks, "k", 0, 5) }, func(ks *Keyspace) {
			ks.DB(0).Delete([]byte("k"), 11)
			ks.Flush(0, 12, now)
		}, now, true},
		{"already expired, then flushed", func(ks *Keyspace) { put(ks, "k", 900, 5) }, func(ks *Keyspace) { ks.Flush(0, 11, now) }, now, false},
		{"another database flushed", func(ks *Keyspace) { put(ks, "k", 0, 5) }, func(ks *Keyspace) { ks.Flush(1, 11, now) }, now, false},
	}
	for _, c := range cases {
		ks := New()
		c.before(ks)
		existed, expired := ks.WatchState(0, []byte("k"), now)
		w := Watch{Since: 10, Existed: existed, Expired: expired}
		c.after(ks)
		if got := ks.Changed(0, []byte("k"), w, c.at); got != c.want {
			t.Errorf("%s: Changed = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestWatchHorizon: a watch older than the remembered deletions aborts.
func TestWatchHorizon(t *testing.T) {
	ks := New()
	put(ks, "k", 0, 5)
	ks.PruneTombstones(20)
	if !ks.Changed(0, []byte("k"), Watch{Since: 10, Existed: true}, 0) {
		t.Error("a watch before the horizon must count as changed")
	}
	if ks.Changed(0, []byte("k"), Watch{Since: 30, Existed: true}, 0) {
		t.Error("a watch after the horizon of an untouched key must not")
	}
}
