package keyspace

import (
	"bufio"
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"github.com/goblindb/goblin/packed"
)

// sampleKeyspace holds, in database 3, what a snapshot must keep besides
// sets: a packed set with an expiry, a deleted key's tombstone, an
// expired key's, and a declared layout; and a layout rule.
func sampleKeyspace() *Keyspace {
	ks := New()
	ks.SetRules(Rules{{Pattern: "p:*", Layout: packed.Int64Float64}})
	d := ks.DB(3)
	z := packed.New(packed.Int32Float32)
	z.Add([]byte("7"), 1.5, 0)
	d.Set([]byte("live"), &Entry{Z: z, ExpireAt: 99_000}, 10)
	z2 := packed.New(packed.Standard)
	z2.Add([]byte("m"), 2, 0)
	d.Set([]byte("gone"), &Entry{Z: z2}, 11)
	d.Delete([]byte("gone"), 12)
	z3 := packed.New(packed.Standard)
	z3.Add([]byte("m"), 2, 0)
	d.Set([]byte("expired"), &Entry{Z: z3, ExpireAt: 5}, 13)
	d.DeleteExpired([]byte("expired"), 14)
	d.Declare([]byte("future"), packed.UUIDFloat32)
	return ks
}

// TestSnapshotKeepsWatchAndDeclarationState: everything EXEC and key
// creation consult must survive a snapshot, or a node restored from one
// would decide differently from its peers.
func TestSnapshotKeepsWatchAndDeclarationState(t *testing.T) {
	ks := sampleKeyspace()
	d := ks.DB(3)

	for name, src := range map[string]*Keyspace{"original": ks, "clone": ks.Clone()} {
		var buf bytes.Buffer
		if err := src.Encode(&buf); err != nil {
			t.Fatal(err)
		}
		got, err := Decode(bufio.NewReader(&buf))
		if err != nil {
			t.Fatalf("%s: decode: %v", name, err)
		}
		gd := got.DB(3)
		if !reflect.DeepEqual(gd.tombstones, d.tombstones) {
			t.Errorf("%s: tombstones %v, want %v", name, gd.tombstones, d.tombstones)
		}
		if !reflect.DeepEqual(gd.expiredDel, d.expiredDel) || len(gd.expiredDel) != 1 {
			t.Errorf("%s: expiry deletions %v, want %v", name, gd.expiredDel, d.expiredDel)
		}
		if l, ok := gd.Declared([]byte("future")); !ok || l != packed.UUIDFloat32 {
			t.Errorf("%s: declared layout %v %v", name, l, ok)
		}
		e := gd.Peek([]byte("live"))
		if e == nil || e.ExpireAt != 99_000 || e.Version != 10 || e.Z.Layout() != packed.Int32Float32 {
			t.Fatalf("%s: live = %+v", name, e)
		}
		if got.Modified(3, []byte("gone")) != ks.Modified(3, []byte("gone")) {
			t.Errorf("%s: Modified(gone) differs", name)
		}
		if !got.Rules().Equal(ks.Rules()) {
			t.Errorf("%s: rules %v", name, got.Rules())
		}
	}
}

func TestDeclarationConsumedOrDropped(t *testing.T) {
	d := New().DB(0)
	d.Declare([]byte("k"), packed.Int32Float64)
	z := packed.New(packed.Int32Float64)
	z.Add([]byte("1"), 1, 0)
	d.Set([]byte("k"), &Entry{Z: z}, 1)
	if _, ok := d.Declared([]byte("k")); ok {
		t.Fatal("creating the key did not consume its declaration")
	}
	d.Declare([]byte("j"), packed.Int32Float64)
	d.Undeclare([]byte("j"))
	if _, ok := d.Declared([]byte("j")); ok {
		t.Fatal("Undeclare kept the declaration")
	}
}

// TestDecodeRefusesEveryTruncation: a keyspace cut anywhere, or of an
// unknown version, is ErrCorrupt, never a partial keyspace.
func TestDecodeRefusesEveryTruncation(t *testing.T) {
	ks := sampleKeyspace()
	var buf bytes.Buffer
	if err := ks.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	if _, err := Decode(bufio.NewReader(bytes.NewReader(data))); err != nil {
		t.Fatalf("whole: %v", err)
	}
	for i := range len(data) {
		got, err := Decode(bufio.NewReader(bytes.NewReader(data[:i])))
		if err != ErrCorrupt || got != nil {
			t.Fatalf("cut at %d of %d: %v, %v", i, len(data), got, err)
		}
	}
	bad := append([]byte{snapshotVersion + 1}, data[1:]...)
	if _, err := Decode(bufio.NewReader(bytes.NewReader(bad))); err != ErrCorrupt {
		t.Fatalf("version %d: %v", bad[0], err)
	}
}

// BenchmarkDecode restores a keyspace of many small keys and tombstones,
// where the per-record work of Decode (not the sets' leaves) dominates.
func BenchmarkDecode(b *testing.B) {
	ks := New()
	d := ks.DB(0)
	for i := range 20_000 {
		k := []byte(fmt.Sprintf("key:%d", i))
		z := packed.New(packed.Standard)
		z.Add([]byte("m"), float64(i), 0)
		d.Set(k, &Entry{Z: z, ExpireAt: int64(i)}, uint64(i))
		if i%4 == 0 {
			d.Delete(k, uint64(i)+1)
		}
	}
	var buf bytes.Buffer
	if err := ks.Encode(&buf); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(bufio.NewReader(bytes.NewReader(buf.Bytes()))); err != nil {
			b.Fatal(err)
		}
	}
}
