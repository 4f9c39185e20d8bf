package rdb

import (
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
)

// An RDB file: "REDIS" and a four-digit version, then a sequence of
// records each introduced by a byte that is either a value type (a key
// and its value follow) or an opcode: AUX (a name and a value: the
// server's version, creation time...), SELECTDB (the database of the keys
// that follow), RESIZEDB (two size hints), EXPIRETIME_MS or EXPIRETIME
// (the next key's expiry), FREQ or IDLE (its LFU or LRU data), MODULE_AUX
// (a module's data, skipped by its annotations), FUNCTION2 (a function
// library's code), and EOF, followed from version 5 on by the CRC64 of
// everything before it (0 when the server did not compute it).

// MaxFileVersion is the newest RDB file version Reader accepts: Redis 7.4's
// (whose new hash encodings it refuses with ErrUnsupported).
const MaxFileVersion = 12

// Entry is a key read from an RDB file. Key is valid until the next call
// to Next.
type Entry struct {
	DB       int
	Key      []byte
	Type     Type
	ExpireAt int64 // Unix milliseconds; 0 for none
}

// Reader reads the keys of an RDB file in order. Call Next for each key;
// for a sorted set, ZSet decodes its members (any value not decoded is
// skipped by the next call to Next).
type Reader struct {
	s       *source
	version int
	aux     [][2]string
	db      int
	key     []byte
	cur     Entry
	pending bool // cur's value is unread
	done    bool
}

// NewReader reads r's header.
func NewReader(r io.Reader) (*Reader, error) {
	rd := &Reader{s: streamSource(r)}
	h, err := rd.s.read(9)
	if err != nil {
		return nil, fmt.Errorf("%w: not an RDB file", ErrCorrupt)
	}
	if string(h[:5]) != "REDIS" {
		return nil, fmt.Errorf("%w: not an RDB file", ErrCorrupt)
	}
	v, err := strconv.Atoi(string(h[5:]))
	if err != nil || v < 1 {
		return nil, fmt.Errorf("%w: RDB version %q", ErrCorrupt, h[5:])
	}
	if v > MaxFileVersion {
		return nil, fmt.Errorf("%w: RDB version %d (newest known %d)", ErrUnsupported, v, MaxFileVersion)
	}
	rd.version = v
	return rd, nil
}

// Version returns the file's RDB version.
func (r *Reader) Version() int { return r.version }

// Aux returns the AUX fields read so far, in file order.
func (r *Reader) Aux() [][2]string { return r.aux }

// Offset returns the number of bytes read.
func (r *Reader) Offset() int64 { return r.s.n }

// Next returns the next key, or io.EOF after the last one once the file's
// checksum has been verified.
func (r *Reader) Next() (*Entry, error) {
	if r.done {
		return nil, io.EOF
	}
	if r.pending {
		r.pending = false
		if err := r.s.skip(r.cur.Type); err != nil {
			return nil, r.fail(err)
		}
	}
	var expire int64
	var buf []byte
	for {
		op, err := r.s.byte()
		if err != nil {
			return nil, r.fail(err)
		}
		switch op {
		case opExpire:
			p, err := r.s.read(4)
			if err != nil {
				return nil, r.fail(err)
			}
			expire = int64(int32(binary.LittleEndian.Uint32(p))) * 1000
			continue
		case opExpireMS:
			p, err := r.s.read(8)
			if err != nil {
				return nil, r.fail(err)
			}
			expire = int64(binary.LittleEndian.Uint64(p))
			continue
		case opFreq:
			if _, err := r.s.byte(); err != nil {
				return nil, r.fail(err)
			}
			continue
		case opIdle:
			if _, err := r.s.length(); err != nil {
				return nil, r.fail(err)
			}
			continue
		case opSelectDB:
			db, err := r.s.length()
			if err != nil {
				return nil, r.fail(err)
			}
			if db > 1<<20 {
				return nil, r.fail(errf("database %d", db))
			}
			r.db = int(db)
			continue
		case opResizeDB:
			if _, err := r.s.length(); err != nil {
				return nil, r.fail(err)
			}
			if _, err := r.s.length(); err != nil {
				return nil, r.fail(err)
			}
			continue
		case opAux:
			k, err := r.s.str(&buf)
			if err != nil {
				return nil, r.fail(err)
			}
			key := string(k)
			v, err := r.s.str(&buf)
			if err != nil {
				return nil, r.fail(err)
			}
			r.aux = append(r.aux, [2]string{key, string(v)})
			continue
		case opModuleAux:
			if _, err := r.s.length(); err != nil { // module id
				return nil, r.fail(err)
			}
			when, err := r.s.length()
			if err != nil {
				return nil, r.fail(err)
			}
			if when != modUInt {
				return nil, r.fail(errf("module aux when-opcode %d", when))
			}
			if _, err := r.s.length(); err != nil {
				return nil, r.fail(err)
			}
			if err := r.s.skipModuleValue(); err != nil {
				return nil, r.fail(err)
			}
			continue
		case opFunctionPreGA:
			return nil, r.fail(fmt.Errorf("%w: pre-release function format", ErrUnsupported))
		case opFunction2:
			if err := r.s.skipStr(); err != nil {
				return nil, r.fail(err)
			}
			continue
		case opEOF:
			return nil, r.end()
		}
		t := Type(op)
		if !t.Valid() {
			return nil, r.fail(fmt.Errorf("%w: value type %d", ErrUnsupported, op))
		}
		k, err := r.s.str(&buf)
		if err != nil {
			return nil, r.fail(err)
		}
		r.key = append(r.key[:0], k...)
		r.cur = Entry{DB: r.db, Key: r.key, Type: t, ExpireAt: expire}
		r.pending = true
		return &r.cur, nil
	}
}

// end checks the checksum after the EOF opcode.
func (r *Reader) end() error {
	r.done = true
	if r.version < 5 {
		return io.EOF
	}
	want := r.s.crc
	p, err := r.s.read(8)
	if err != nil {
		return r.fail(err)
	}
	if got := binary.LittleEndian.Uint64(p); got != 0 && got != want {
		return fmt.Errorf("%w: file checksum %#x, computed %#x", ErrChecksum, got, want)
	}
	return io.EOF
}

func (r *Reader) fail(err error) error {
	r.done = true
	return fmt.Errorf("rdb: at byte %d: %w", r.s.n, err)
}

// ZSet decodes the current key's sorted set, calling fn for each member,
// and returns the number of members. It fails with ErrNotZSet for another
// type (whose value Next then skips) and with ErrEmpty for a set without
// members (which Redis skips when loading).
func (r *Reader) ZSet(fn MemberFunc) (int, error) {
	if !r.pending {
		return 0, fmt.Errorf("rdb: no value to read")
	}
	if !r.cur.Type.IsZSet() {
		return 0, fmt.Errorf("%w: %v", ErrNotZSet, r.cur.Type)
	}
	r.pending = false
	n, err := r.s.zset(r.cur.Type, fn)
	if err != nil && !isEmpty(err) {
		err = r.fail(err)
	}
	return n, err
}
