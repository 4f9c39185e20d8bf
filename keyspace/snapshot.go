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
	dec := decoder{r: r}
	version := dec.byte()
	if version < 1 || version > snapshotVersion {
		dec.fail()
	}
	ks.horizon = dec.uvarint()
	nrules := dec.uvarint()
	if nrules > 1<<16 {
		dec.fail()
	}
	for j := uint64(0); j < nrules && dec.err == nil; j++ {
		p, l := dec.str(), dec.layout()
		ks.rules = append(ks.rules, Rule{Pattern: p, Layout: l})
	}
	for i, d := range ks.dbs {
		ks.flushed[i] = dec.uvarint()
		n := dec.uvarint()
		for j := uint64(0); j < n && dec.err == nil; j++ {
			k, at, ver, z := dec.bytes(), dec.varint(), dec.uvarint(), dec.zset()
			if _, dup := d.keys[string(k)]; dup || at < 0 {
				dec.fail()
			}
			if dec.err == nil {
				d.Set(k, &Entry{Z: z, ExpireAt: at}, ver)
			}
		}
		n = dec.uvarint()
		for j := uint64(0); j < n && dec.err == nil; j++ {
			k, idx := dec.str(), dec.uvarint()
			d.tombstones[k] = idx
			if version < 2 {
				continue
			}
			switch dec.byte() {
			case 0:
			case 1:
				d.expiredDel[k] = struct{}{}
			default:
				dec.fail()
			}
		}
		if version < 2 {
			continue
		}
		n = dec.uvarint()
		for j := uint64(0); j < n && dec.err == nil; j++ {
			k, l := dec.str(), dec.layout()
			d.declared[k] = l
		}
	}
	if dec.err != nil {
		return nil, dec.err
	}
	return ks, nil
}

// decoder reads the fields of an encoded keyspace. Its error is sticky:
// after the first bad field every read returns a zero value, so Decode
// checks once, at the end (its loops also stop at the first failure, so a
// corrupt count costs nothing).
type decoder struct {
	r   *bufio.Reader
	err error
}

func (d *decoder) fail() { d.err = ErrCorrupt }

func (d *decoder) byte() byte {
	if d.err != nil {
		return 0
	}
	b, err := d.r.ReadByte()
	if err != nil {
		d.fail()
	}
	return b
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, err := binary.ReadUvarint(d.r)
	if err != nil {
		d.fail()
	}
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, err := binary.ReadVarint(d.r)
	if err != nil {
		d.fail()
	}
	return v
}

// bytes reads a length-prefixed string of at most maxKeyLen bytes.
func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil || n > maxKeyLen {
		d.fail()
		return nil
	}
	// Grow with the data actually present: a corrupt length must not
	// allocate what the stream does not hold.
	b, err := io.ReadAll(io.LimitReader(d.r, int64(n)))
	if err != nil || uint64(len(b)) != n {
		d.fail()
		return nil
	}
	return b
}

func (d *decoder) str() string { return string(d.bytes()) }

// layout reads a valid layout byte.
func (d *decoder) layout() packed.Layout {
	l := packed.Layout(d.byte())
	if d.err == nil && !l.Valid() {
		d.fail()
	}
	return l
}

// zset reads a set that is not empty (an empty set is never stored).
func (d *decoder) zset() *packed.ZSet {
	if d.err != nil {
		return nil
	}
	z, err := packed.Decode(d.r)
	if err != nil || z.Len() == 0 {
		d.fail()
		return nil
	}
	return z
}
