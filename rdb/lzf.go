package rdb

import "sync"

// LZF, the compression Redis applies to RDB strings longer than 20 bytes.
//
// The compressed stream is a sequence of runs. A control byte below 32
// starts a literal run of ctrl+1 bytes. Otherwise its top three bits are a
// back-reference length (7 meaning "plus the next byte"), its low five
// bits the high bits of an offset whose low byte follows; the reference
// copies length+2 bytes starting offset+1 bytes behind the output's end.
//
// lzfCompress makes the choices Redis's build of liblzf makes (a 2^16-slot
// hash of the next three bytes, the "very fast" rehash after a match), so
// a string compresses to the same bytes as in a DUMP made by Redis whenever
// Redis's uninitialised hash table held nothing that misled it.

const (
	lzfHashLog = 16
	lzfMaxLit  = 1 << 5
	lzfMaxOff  = 1 << 13
	lzfMaxRef  = 1<<8 + 1<<3
	// lzfMaxRatio bounds how much one compressed byte can expand: a
	// reference of lzfMaxRef+2 bytes costs at least two.
	lzfMaxRatio = (lzfMaxRef + 2 + 1) / 2
)

// lzfDecompress expands in into exactly n bytes appended to dst, or fails.
func lzfDecompress(dst, in []byte, n int) ([]byte, error) {
	if n < 0 || n > len(in)*lzfMaxRatio+lzfMaxLit {
		return dst, errf("LZF string claims %d bytes from %d", n, len(in))
	}
	base := len(dst)
	end := base + n
	dst = grow(dst, n)
	ip := 0
	for ip < len(in) {
		ctrl := int(in[ip])
		ip++
		if ctrl < lzfMaxLit {
			ctrl++
			if len(dst)+ctrl > end || ip+ctrl > len(in) {
				return dst, errf("LZF literal run overflows")
			}
			dst = append(dst, in[ip:ip+ctrl]...)
			ip += ctrl
			continue
		}
		length := ctrl >> 5
		if ip >= len(in) {
			return dst, errf("LZF reference truncated")
		}
		if length == 7 {
			length += int(in[ip])
			ip++
			if ip >= len(in) {
				return dst, errf("LZF reference truncated")
			}
		}
		ref := len(dst) - (ctrl&0x1f)<<8 - 1 - int(in[ip])
		ip++
		if len(dst)+length+2 > end || ref < base {
			return dst, errf("LZF reference out of range")
		}
		for k := 0; k < length+2; k++ {
			dst = append(dst, dst[ref+k])
		}
	}
	if len(dst) != end {
		return dst, errf("LZF string expands to %d bytes, not %d", len(dst)-base, n)
	}
	return dst, nil
}

// grow makes room for n more bytes in dst's capacity.
func grow(dst []byte, n int) []byte {
	if cap(dst)-len(dst) < n {
		nd := make([]byte, len(dst), len(dst)+n)
		copy(nd, dst)
		dst = nd
	}
	return dst
}

// lzfTable is a compressor's hash table: input positions by hash, 0 for
// none (position 0 can never be referenced). Tables are pooled and handed
// back cleared.
type lzfTable struct {
	slot    [1 << lzfHashLog]int32
	touched []int32
}

var lzfTables = sync.Pool{New: func() any { return new(lzfTable) }}

func lzfIdx(h uint32) int32 { return int32((h>>(3*8-lzfHashLog) - h*5) & (1<<lzfHashLog - 1)) }

func (t *lzfTable) set(h uint32, pos int) {
	i := lzfIdx(h)
	if t.slot[i] == 0 {
		t.touched = append(t.touched, i)
	}
	t.slot[i] = int32(pos)
}

// lzfCompress compresses in into at most maxOut bytes appended to dst and
// reports whether it fit.
func lzfCompress(dst, in []byte, maxOut int) ([]byte, bool) {
	if len(in) == 0 || maxOut <= 0 || len(in) >= 1<<31 {
		return dst, false
	}
	t := lzfTables.Get().(*lzfTable)
	defer func() {
		for _, i := range t.touched {
			t.slot[i] = 0
		}
		t.touched = t.touched[:0]
		lzfTables.Put(t)
	}()
	base := len(dst)
	// out is written with slack beyond maxOut; the checks below are the
	// ones that decide whether the result fits.
	out := grow(dst, maxOut+16)[:base+maxOut+16]
	outEnd := base + maxOut
	inEnd := len(in)
	ip, op, lit := 0, base+1, 0
	var hval uint32
	if inEnd >= 2 {
		hval = uint32(in[0])<<8 | uint32(in[1])
	}
	for ip < inEnd-2 {
		hval = hval<<8 | uint32(in[ip+2])
		i := lzfIdx(hval)
		ref := int(t.slot[i])
		t.set(hval, ip)
		off := ip - ref - 1
		if ref > 0 && off < lzfMaxOff && in[ref+2] == in[ip+2] && in[ref] == in[ip] && in[ref+1] == in[ip+1] {
			n := 2
			maxlen := min(inEnd-ip-n, lzfMaxRef)
			if op+3+1 >= outEnd && op-b2i(lit == 0)+3+1 >= outEnd {
				return dst, false
			}
			out[op-lit-1] = byte(lit - 1)
			op -= b2i(lit == 0)
			n = lzfMatch(in, ref, ip, n, maxlen)
			n -= 2
			ip++
			if n < 7 {
				out[op] = byte(off>>8 + n<<5)
				op++
			} else {
				out[op] = byte(off>>8 + 7<<5)
				out[op+1] = byte(n - 7)
				op += 2
			}
			out[op] = byte(off)
			op++
			lit = 0
			op++
			ip += n + 1
			if ip >= inEnd-2 {
				break
			}
			ip -= 2
			hval = uint32(in[ip])<<8 | uint32(in[ip+1])
			hval = hval<<8 | uint32(in[ip+2])
			t.set(hval, ip)
			ip++
			hval = hval<<8 | uint32(in[ip+2])
			t.set(hval, ip)
			ip++
			continue
		}
		if op >= outEnd {
			return dst, false
		}
		lit++
		out[op] = in[ip]
		op++
		ip++
		if lit == lzfMaxLit {
			out[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	if op+3 > outEnd {
		return dst, false
	}
	for ip < inEnd {
		lit++
		out[op] = in[ip]
		op++
		ip++
		if lit == lzfMaxLit {
			out[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	out[op-lit-1] = byte(lit - 1)
	op -= b2i(lit == 0)
	if op > outEnd {
		return dst, false
	}
	return out[:op], true
}

// lzfMatch extends a match of n bytes between in[ref:] and in[ip:] the way
// liblzf's unrolled loop does (which may count a little past maxlen).
func lzfMatch(in []byte, ref, ip, n, maxlen int) int {
	if maxlen > 16 {
		for range 16 {
			n++
			if in[ref+n] != in[ip+n] {
				return n
			}
		}
	}
	for {
		n++
		if !(n < maxlen && in[ref+n] == in[ip+n]) {
			return n
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
