// Package wire is RESP as Goblin's code speaks it on both sides: the
// server's request framer (Framer: Redis's parsing rules, limits and
// protocol errors, requests as slices of its buffer), the reply writer
// (Writer: RESP2 and RESP3, doubles in Redis 7.2's or 7.0's format), a
// request encoder, a bounded RESP2 reply reader, a reply skipper for load
// generators, and a byte-exact copier of RESP2/RESP3 replies for tests
// that compare replies with redis-server's. The client edge (resp) frames
// its connections with it and commands write their replies with its
// Writer (command.Writer); the node-to-node plane (cluster), goblind's
// subcommands that talk to a server (backup, import, restore, ping), the
// drill, the bench tool and the tests use its client side.
package wire

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/goblindb/goblin/internal/bulkcopy"
)

// Reply is one parsed RESP2 reply.
type Reply struct {
	Kind  byte // '+', '-', ':', '$', '*'
	Str   []byte
	Num   int64
	Array []Reply
	Null  bool
}

// Err is the reply as an error: an Error for an error reply, else nil.
func (r Reply) Err() error {
	if r.Kind == '-' {
		return Error(r.Str)
	}
	return nil
}

// Error is a server's error reply ("ERR ...", "MOVED ...").
type Error string

func (e Error) Error() string { return string(e) }

// Limits bound what a reply may claim, so a broken or hostile peer cannot
// make the reader allocate without end.
type Limits struct {
	MaxBulk  int64 // bytes of one bulk string
	MaxArray int64 // elements of one array
	MaxDepth int   // nesting of arrays
}

// DefaultLimits are Redis's own bound on a bulk string (512 MiB), a
// million elements and eight levels.
var DefaultLimits = Limits{MaxBulk: 512 << 20, MaxArray: 1 << 20, MaxDepth: 8}

// ErrMalformed wraps every reply that is not RESP2 or exceeds the limits.
var ErrMalformed = errors.New("malformed reply")

// ReadReply reads one reply within DefaultLimits.
func ReadReply(br *bufio.Reader) (Reply, error) { return ReadReplyWithin(br, DefaultLimits) }

// ReadReplyWithin reads one reply within lim.
func ReadReplyWithin(br *bufio.Reader, lim Limits) (Reply, error) {
	return readReply(br, lim, 0)
}

func readReply(br *bufio.Reader, lim Limits, depth int) (Reply, error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return Reply{}, fmt.Errorf("%w: line longer than the read buffer", ErrMalformed)
		}
		return Reply{}, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return Reply{}, fmt.Errorf("%w: %q", ErrMalformed, line)
	}
	r := Reply{Kind: line[0]}
	body := line[1 : len(line)-2]
	switch r.Kind {
	case '+', '-':
		r.Str = append([]byte(nil), body...)
		return r, nil
	case ':', '$', '*':
	default:
		return Reply{}, fmt.Errorf("%w: type %q", ErrMalformed, r.Kind)
	}
	n, err := strconv.ParseInt(string(body), 10, 64)
	if err != nil {
		return Reply{}, fmt.Errorf("%w: %q", ErrMalformed, line)
	}
	switch r.Kind {
	case ':':
		r.Num = n
	case '$':
		if n < 0 {
			r.Null = true
			return r, nil
		}
		if n > lim.MaxBulk {
			return Reply{}, fmt.Errorf("%w: bulk string of %d bytes", ErrMalformed, n)
		}
		r.Str = make([]byte, n+2)
		if _, err := io.ReadFull(br, r.Str); err != nil {
			return Reply{}, err
		}
		r.Str = r.Str[:n]
	case '*':
		if n < 0 {
			r.Null = true
			return r, nil
		}
		if n > lim.MaxArray || depth >= lim.MaxDepth {
			return Reply{}, fmt.Errorf("%w: array of %d elements at depth %d", ErrMalformed, n, depth)
		}
		r.Array = make([]Reply, n)
		for i := range r.Array {
			if r.Array[i], err = readReply(br, lim, depth+1); err != nil {
				return Reply{}, err
			}
		}
	}
	return r, nil
}

// AppendCommand appends a request, an array of bulk strings, to dst.
func AppendCommand(dst []byte, args ...[]byte) []byte {
	dst = AppendArrayLen(dst, len(args))
	for _, a := range args {
		dst = AppendBulk(dst, a)
	}
	return dst
}

// AppendCommandStrings is AppendCommand of strings.
func AppendCommandStrings(dst []byte, args ...string) []byte {
	dst = AppendArrayLen(dst, len(args))
	for _, a := range args {
		dst = AppendBulkString(dst, a)
	}
	return dst
}

// AppendArrayLen appends the header of an array of n elements.
func AppendArrayLen(dst []byte, n int) []byte {
	return append(strconv.AppendInt(append(dst, '*'), int64(n), 10), '\r', '\n')
}

// AppendBulk appends b as a bulk string.
func AppendBulk(dst, b []byte) []byte {
	dst = append(strconv.AppendInt(append(dst, '$'), int64(len(b)), 10), '\r', '\n')
	return append(bulkcopy.Append(dst, b), '\r', '\n')
}

// AppendBulkString appends s as a bulk string.
func AppendBulkString(dst []byte, s string) []byte {
	dst = append(strconv.AppendInt(append(dst, '$'), int64(len(s)), 10), '\r', '\n')
	return append(append(dst, s...), '\r', '\n')
}

// AppendBulkInt appends the decimal text of n as a bulk string.
func AppendBulkInt(dst []byte, n int64) []byte {
	var tmp [20]byte
	return AppendBulk(dst, strconv.AppendInt(tmp[:0], n, 10))
}
