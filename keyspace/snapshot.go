package keyspace

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"

	"github.com/goblindb/goblin/packed"
)

// ErrCorrupt is returned by Decode for data that is not a keyspace.
var ErrCorrupt = errors.New("keyspace: corrupt snapshot")

// snapshotVersion 2 added, per database, whether each tombstone was an
// expiry and the layouts ZCREATE declared. Version 1 is still read.
const snapshotVersion = 2

// Clone returns a deep copy that can itself be changed. A point-in-time
// image to write while the original keeps changing is a View (Snapshot),
// which copies no member.
func (ks *Keyspace) Clone() *Keyspace {
	c := &Keyspace{rules: append(Rules(nil), ks.rules...), flushed: ks.flushed, horizon: ks.horizon}
	for i, d := range ks.dbs {
		nd := newDB()
		for k, e := range d.keys {
			ne := &Entry{Z: e.Z.Clone(), ExpireAt: e.ExpireAt, Version: e.Version}
			nd.keys[k] = ne
			nd.order.Set(scanItem{scanHash(k), k})
			if e.ExpireAt != 0 {
				nd.expires.Set(expireItem{e.ExpireAt, k})
			}
		}
		for k, idx := range d.tombstones {
			nd.tombstones[k] = idx
		}
		for k := range d.expiredDel {
			nd.expiredDel[k] = struct{}{}
		}
		for k, l := range d.declared {
			nd.declared[k] = l
		}
		c.dbs[i] = nd
	}
	return c
}

// Encode writes the whole keyspace (View.Encode). The caller holds the
// write lock, or owns the keyspace.
func (ks *Keyspace) Encode(w io.Writer) error { return ks.Snapshot().Encode(w) }

// Encode writes the whole keyspace as the view holds it: rules,
// per-database flush indexes, the tombstone horizon, then every key
// (name, expiry, version, set) and tombstone of every database. It
// streams: nothing but a 64 KiB buffer is held in memory.
func (v *View) Encode(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	var tmp []byte
	put := func(s string) {
		tmp = binary.AppendUvarint(tmp, uint64(len(s)))
		tmp = append(tmp, s...)
	}
	flush := func(atLeast int) error {
		if len(tmp) < atLeast {
			return nil
		}
		_, err := bw.Write(tmp)
		tmp = tmp[:0]
		return err
	}
	tmp = append(tmp, snapshotVersion)
	tmp = binary.AppendUvarint(tmp, v.horizon)
	tmp = binary.AppendUvarint(tmp, uint64(len(v.rules)))
	for _, r := range v.rules {
		put(r.Pattern)
		tmp = append(tmp, byte(r.Layout))
	}
	for i := range v.dbs {
		d := &v.dbs[i]
		tmp = binary.AppendUvarint(tmp, v.flushed[i])
		tmp = binary.AppendUvarint(tmp, uint64(len(d.keys)))
		for _, e := range d.keys {
			put(e.Key)
			tmp = binary.AppendVarint(tmp, e.ExpireAt)
			tmp = binary.AppendUvarint(tmp, e.Version)
			if err := flush(0); err != nil {
				return err
			}
			if err := e.Z.EncodeTo(bw); err != nil {
				return err
			}
		}
		tmp = binary.AppendUvarint(tmp, uint64(len(d.tombstones)))
		for _, t := range d.tombstones {
			put(t.key)
			tmp = binary.AppendUvarint(tmp, t.idx)
			byExpiry := byte(0)
			if t.byExpiry {
				byExpiry = 1
			}
			tmp = append(tmp, byExpiry)
			if err := flush(1 << 15); err != nil {
				return err
			}
		}
		tmp = binary.AppendUvarint(tmp, uint64(len(d.declared)))
		for _, dc := range d.declared {
			put(dc.key)
			tmp = append(tmp, byte(dc.layout))
			if err := flush(1 << 15); err != nil {
				return err
			}
		}
	}
	if err := flush(0); err != nil {
		return err
	}
	return bw.Flush()
}

// maxKeyLen bounds a decoded key name (Redis's limit is 512 MiB).
const maxKeyLen = 512 << 20

// Decode reads a keyspace written by Encode.
func Decode(r *bufio.Reader) (*Keyspace, error) {
	ks := New()
	fail := func() (*Keyspace, error) { return nil, ErrCorrupt }
	uv := func() (uint64, bool) {
		v, err := binary.ReadUvarint(r)
		return v, err == nil
	}
	str := func() (string, bool) {
		n, ok := uv()
		if !ok || n > maxKeyLen {
			return "", false
		}
		// Grow with the data actually present: a corrupt length must not
		// allocate what the stream does not hold.
		b, err := io.ReadAll(io.LimitReader(r, int64(n)))
		if err != nil || uint64(len(b)) != n {
			return "", false
		}
		return string(b), true
	}
	// strLayout reads a string and a valid layout byte (a rule's pattern or
	// a declared key, and its layout).
	strLayout := func() (string, packed.Layout, bool) {
		s, ok := str()
		lb, err := r.ReadByte()
		if !ok || err != nil || !packed.Layout(lb).Valid() {
			return "", 0, false
		}
		return s, packed.Layout(lb), true
	}
	version, err := r.ReadByte()
	if err != nil || version < 1 || version > snapshotVersion {
		return fail()
	}
	var ok bool
	if ks.horizon, ok = uv(); !ok {
		return fail()
	}
	nrules, ok := uv()
	if !ok || nrules > 1<<16 {
		return fail()
	}
	for i := uint64(0); i < nrules; i++ {
		p, l, ok := strLayout()
		if !ok {
			return fail()
		}
		ks.rules = append(ks.rules, Rule{Pattern: p, Layout: l})
	}
	for i := range ks.dbs {
		d := ks.dbs[i]
		if ks.flushed[i], ok = uv(); !ok {
			return fail()
		}
		n, ok := uv()
		if !ok {
			return fail()
		}
		for j := uint64(0); j < n; j++ {
			k, ok := str()
			if !ok {
				return fail()
			}
			at, err := binary.ReadVarint(r)
			if err != nil || at < 0 {
				return fail()
			}
			ver, ok := uv()
			if !ok {
				return fail()
			}
			z, err := packed.Decode(r)
			if err != nil || z.Len() == 0 {
				return fail()
			}
			if _, dup := d.keys[k]; dup {
				return fail()
			}
			d.Set([]byte(k), &Entry{Z: z, ExpireAt: at}, ver)
		}
		nt, ok := uv()
		if !ok {
			return fail()
		}
		for j := uint64(0); j < nt; j++ {
			k, ok := str()
			idx, ok2 := uv()
			if !ok || !ok2 {
				return fail()
			}
			d.tombstones[k] = idx
			if version >= 2 {
				switch b, err := r.ReadByte(); {
				case err != nil || b > 1:
					return fail()
				case b == 1:
					d.expiredDel[k] = struct{}{}
				}
			}
		}
		if version < 2 {
			continue
		}
		nd, ok := uv()
		if !ok {
			return fail()
		}
		for j := uint64(0); j < nd; j++ {
			k, l, ok := strLayout()
			if !ok {
				return fail()
			}
			d.declared[k] = l
		}
	}
	return ks, nil
}
