package rdb

import (
	"bufio"
	"errors"
	"io"
)

// source hands out the bytes of an RDB stream: a DUMP payload held in
// memory, or a file read through a buffer. Every length read from the
// stream is checked against what is really there before anything of that
// size is allocated: in memory against the bytes left, from a file by
// reading in bounded chunks, so a lying length costs at most the bytes
// that follow it.
type source struct {
	mem []byte // the whole input, when in memory
	off int

	r       *bufio.Reader // the input, when streamed
	scratch []byte        // holds reads larger than r's buffer
	sum     bool          // keep crc over every byte handed out
	crc     uint64
	n       int64 // bytes handed out
}

const chunk = 1 << 20

func memSource(p []byte) *source { return &source{mem: p} }

func streamSource(r io.Reader) *source {
	return &source{r: bufio.NewReaderSize(r, 64<<10), sum: true}
}

// read returns the next n bytes, valid until the next call.
func (s *source) read(n int) ([]byte, error) {
	if n < 0 {
		return nil, errf("negative length")
	}
	if s.r == nil {
		if n > len(s.mem)-s.off {
			return nil, errf("%d bytes wanted, %d left", n, len(s.mem)-s.off)
		}
		p := s.mem[s.off : s.off+n]
		s.off += n
		s.n += int64(n)
		return p, nil
	}
	var p []byte
	if n <= s.r.Size() {
		var err error
		if p, err = s.r.Peek(n); err != nil {
			return nil, truncated(err)
		}
		s.r.Discard(n)
	} else {
		s.scratch = s.scratch[:0]
		for left := n; left > 0; {
			k := min(left, chunk)
			s.scratch = grow(s.scratch, k)
			m := len(s.scratch)
			if _, err := io.ReadFull(s.r, s.scratch[m:m+k]); err != nil {
				return nil, truncated(err)
			}
			s.scratch = s.scratch[:m+k]
			left -= k
		}
		p = s.scratch
	}
	if s.sum {
		s.crc = CRC64(s.crc, p)
	}
	s.n += int64(n)
	return p, nil
}

func truncated(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errf("unexpected end of data")
	}
	return err
}

func (s *source) byte() (byte, error) {
	p, err := s.read(1)
	if err != nil {
		return 0, err
	}
	return p[0], nil
}

// left reports the bytes left in memory, or -1 for a stream.
func (s *source) left() int {
	if s.r == nil {
		return len(s.mem) - s.off
	}
	return -1
}
