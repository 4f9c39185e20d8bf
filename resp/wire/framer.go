package wire

import (
	"errors"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goblindb/goblin/internal/bulkcopy"
	"github.com/goblindb/goblin/internal/sds"
)

// Framer is the server side of a client connection's requests: it reads
// the client's bytes with Redis's own request parser rules
// (processInlineBuffer and processMultibulkBuffer), so that:
//
//   - inline commands are split as Redis splits them (sdssplitargs: quotes,
//     \xHH escapes);
//   - framing Redis tolerates is tolerated ("*0", "*-1", any two bytes
//     after a bulk string's data, any byte after a header's '\r');
//   - framing Redis refuses is a ProtocolError with Redis's text, returned
//     once the requests that preceded it were returned;
//   - limits are Redis's (512 MB bulk strings, INT_MAX arguments, 64 KB
//     lines, smaller ones before AUTH), so a huge length cannot make the
//     server buffer without bound, and Limit bounds the bytes of requests
//     not yet complete (client-query-buffer-limit).
//
// ReadBatch returns every complete request received so far as argument
// slices pointing into the Framer's buffer: no copy, no allocation per
// multibulk request. ReadFirst returns one request and its exact bytes.
//
// While its client is blocked, the connection's goroutine is not reading;
// WatchClose then reads ahead in the background to notice a disconnect,
// keeping what it reads for the parser.
//
// A Framer is used by one goroutine, except for WatchClose's background
// read, which StopWatch (or the next read) ends.
type Framer struct {
	conn net.Conn
	// Unauth reports whether the client has not authenticated yet (nil:
	// it has): its requests then have Redis's smaller limits.
	Unauth func() bool
	// Limit is client-query-buffer-limit (nil: none); OverLimit is told
	// the buffer's first bytes when it passes it, before the Framer stops
	// with ErrQueryBufferLimit.
	Limit     *atomic.Int64
	OverLimit func(initial []byte)
	// NetIn counts the bytes read (nil: not counted).
	NetIn *atomic.Int64

	// in holds the bytes received: in[:req] the requests already returned
	// (valid until the next read), in[req:pos] the part of the request
	// being parsed that was parsed, in[pos:] the rest.
	in      []byte
	req     int
	pos     int
	last    int   // where the last request parsed starts
	marks   []int // argument bounds of the request being parsed, relative to req
	argv    [][]byte
	cmds    [][][]byte
	scanned int  // pending bytes already searched for the current line's end
	nul     bool // a NUL byte ends the search for the current line's end
	st      frameState
	args    int64 // arguments left in the current request
	bulk    int64 // bytes left in the current bulk string's data
	err     error // the connection's read error, returned once nothing is left
	// stop is why parsing stopped (st == stDead): a *ProtocolError or
	// ErrQueryBufferLimit, returned once the requests before it were.
	stop error

	// Raw mode (rawread.go): reading a socket's descriptor, when its fd
	// is not -1 (else conn is read).
	rawState

	// Background read-ahead while blocked.
	mu      sync.Mutex
	reading bool
	done    chan struct{}
}

// ProtocolError is a request Redis refuses to parse. The connection
// answers Reply and closes.
type ProtocolError struct{ Msg string }

func (e *ProtocolError) Error() string { return "Protocol error: " + e.Msg }

// Reply is the error reply Redis writes for e: one line, a line break
// the client sent in it ("expected '$', got '\n'") written as a space.
func (e *ProtocolError) Reply() []byte {
	return []byte("-ERR Protocol error: " + OneLine(e.Msg) + "\r\n")
}

// ErrQueryBufferLimit ends a connection whose incomplete requests passed
// the Framer's Limit: nothing more is parsed, and no reply is due.
var ErrQueryBufferLimit = errors.New("query buffer limit reached")

type frameState uint8

const (
	stStart    frameState = iota // at the start of a request
	stBulkLen                    // expecting "$<len>\r\n"
	stBulkData                   // inside a bulk string's data
	stBulkTail                   // the two bytes after the data
	stDead                       // parsing stopped (stop says why)
)

// ProtoMaxBulkLen is the longest bulk string a request may hold: Redis's
// proto-max-bulk-len default.
const ProtoMaxBulkLen = 512 * 1024 * 1024

// Redis's other request limits.
const (
	protoInlineMax     = 64 * 1024 // PROTO_INLINE_MAX_SIZE
	maxMultibulkLen    = 1<<31 - 1 // INT_MAX
	unauthMultibulkLen = 10
	unauthBulkLen      = 16384
	readChunk          = 16 * 1024
	// keepBuffer is the largest input buffer kept once it is empty.
	keepBuffer = 64 * 1024
)

// NewFramer returns a Framer reading requests from c.
func NewFramer(c net.Conn) *Framer { return &Framer{conn: c, rawState: rawState{fd: -1}} }

// ReadBatch returns the complete requests received, reading from the
// connection when none is buffered; before such a read it calls flush
// (the replies of the requests before are then on their way). The
// argument slices stay valid until the next call. Once the requests
// before a protocol error were returned, it returns the *ProtocolError.
func (f *Framer) ReadBatch(flush func() error) ([][][]byte, error) {
	return f.read(-1, flush)
}

// ReadFirst returns the next request and raw, its bytes as received (a
// slice of the buffer, valid like the arguments until the next read).
func (f *Framer) ReadFirst() (argv [][]byte, raw []byte, err error) {
	cmds, err := f.read(1, nil)
	if err != nil {
		return nil, nil, err
	}
	return cmds[0], f.in[f.last:f.req], nil
}

// read returns up to max requests (max < 0: all that are complete).
func (f *Framer) read(max int, flush func() error) ([][][]byte, error) {
	f.waitReadAhead()
	f.release()
	for {
		if f.st == stDead {
			return nil, f.stop
		}
		f.parse(max)
		if len(f.cmds) > 0 {
			return f.cmds, nil
		}
		if f.st == stDead {
			continue
		}
		if f.err != nil {
			return nil, f.err
		}
		if flush != nil {
			if err := flush(); err != nil {
				return nil, err
			}
		}
		if f.fill() {
			return nil, ErrWouldBlock
		}
	}
}

// BufStats returns the bytes of the query buffer received and not yet
// run (the batch returned included) and its free space.
func (f *Framer) BufStats() (used, free int) { return len(f.in), cap(f.in) - len(f.in) }

// release forgets the requests returned by the last read.
func (f *Framer) release() {
	clear(f.argv) // inline arguments are allocated: let them go
	f.argv, f.cmds = f.argv[:0], f.cmds[:0]
	if f.req == 0 {
		return
	}
	if f.req == len(f.in) && cap(f.in) > keepBuffer {
		f.in, f.req, f.pos = nil, 0, 0
		return
	}
	rest := copy(f.in, f.in[f.req:])
	f.in, f.pos, f.req = f.in[:rest], f.pos-f.req, 0
}

// countIn counts n bytes read from the client.
func (f *Framer) countIn(n int) {
	if f.NetIn != nil && n > 0 {
		f.NetIn.Add(int64(n))
	}
}

// fill reads once from the connection, first moving the request being
// parsed to the start of the buffer (no request is returned: nothing
// points into it). In raw mode, or reading a TLS session over a
// RawSocket in raw mode, it may instead report that the socket is to be
// waited for first (wait).
func (f *Framer) fill() (wait bool) {
	rest := copy(f.in, f.in[f.req:])
	f.in, f.pos, f.req = f.in[:rest], f.pos-f.req, 0
	if cap(f.in)-len(f.in) < readChunk/4 {
		size := 2*cap(f.in) + readChunk
		if f.Limit != nil {
			// Past the limit by one read at most: then the client closes.
			// (Compared without adding to the limit, which may be as
			// large as an int64 holds.)
			if lim := max(f.Limit.Load(), int64(len(f.in))); lim < int64(size-readChunk) {
				size = int(lim) + readChunk
			}
		}
		nb := make([]byte, len(f.in), size)
		bulkcopy.Copy(nb, f.in)
		f.in = nb
	}
	var n int
	var err error
	if f.fd >= 0 {
		n, wait, err = f.readRaw(f.in[len(f.in):cap(f.in)])
	} else {
		n, err = f.conn.Read(f.in[len(f.in):cap(f.in)])
		if err != nil && errors.Is(err, ErrWouldBlock) {
			// A RawSocket under the connection (a TLS session) in raw mode.
			wait, err = n == 0, nil
		}
	}
	f.in = f.in[:len(f.in)+n]
	f.countIn(n)
	if err != nil {
		f.err = err
	}
	if f.Limit != nil && int64(len(f.in)) > f.Limit.Load() {
		f.queryBufferExceeded()
	}
	return wait
}

// queryBufferExceeded drops the buffer of a client that passed the query
// buffer limit: nothing more is parsed or returned.
func (f *Framer) queryBufferExceeded() {
	if f.OverLimit != nil {
		f.OverLimit(f.in[:min(len(f.in), 64)])
	}
	f.in, f.req, f.pos = nil, 0, 0
	f.marks = f.marks[:0]
	f.stop = ErrQueryBufferLimit
	f.st = stDead
}

// pending returns the received bytes not parsed yet.
func (f *Framer) pending() []byte { return f.in[f.pos:] }

// consume drops n parsed bytes.
func (f *Framer) consume(n int) {
	f.pos += n
	f.scanned, f.nul = 0, false
}

// findLineEnd finds c in the pending bytes as C's strchr would in Redis's
// NUL-terminated buffer (a NUL byte ends the search), resuming where the
// previous search of the same line stopped: a line arriving byte by byte
// costs linear time.
func (f *Framer) findLineEnd(c byte) int {
	in := f.pending()
	if f.nul {
		return -1
	}
	for i := f.scanned; i < len(in); i++ {
		switch in[i] {
		case c:
			return i
		case 0:
			f.nul = true
			return -1
		}
	}
	f.scanned = len(in)
	return -1
}

// parse parses the received bytes into requests, at most max of them
// (max < 0: all that are complete).
func (f *Framer) parse(max int) {
	for f.pos < len(f.in) && f.st != stDead && len(f.cmds) != max {
		in := f.pending()
		switch f.st {
		case stStart:
			f.req = f.pos
			if in[0] == '*' {
				if !f.multibulkHeader() {
					return
				}
			} else if !f.inline() {
				return
			}
		case stBulkLen:
			if !f.bulkHeader() {
				return
			}
		case stBulkData:
			k := int(min(f.bulk, int64(len(in))))
			f.pos += k
			f.bulk -= int64(k)
			if f.bulk == 0 {
				f.st = stBulkTail
			}
		case stBulkTail:
			// Redis takes the two bytes after the data without looking.
			if len(in) < 2 {
				return
			}
			f.consume(2)
			f.args--
			if f.args == 0 {
				f.complete()
			} else {
				f.st = stBulkLen
			}
		}
	}
	if f.st == stStart {
		f.req = f.pos // between requests: nothing to keep
	}
}

// complete ends the multibulk request being parsed: its arguments become
// slices of the buffer.
func (f *Framer) complete() {
	at := len(f.argv)
	base := f.in[f.req:f.pos]
	for i := 0; i < len(f.marks); i += 2 {
		s, e := f.marks[i], f.marks[i+1]
		f.argv = append(f.argv, base[s:e:e])
	}
	f.marks = f.marks[:0]
	f.cmds = append(f.cmds, f.argv[at:len(f.argv):len(f.argv)])
	f.st = stStart
	f.last, f.req = f.req, f.pos
}

// inline parses one inline request; false when the line is incomplete.
func (f *Framer) inline() bool {
	in := f.pending()
	nl := f.findLineEnd('\n')
	if nl < 0 {
		if len(in) > protoInlineMax {
			f.protocolError("too big inline request")
		}
		return false
	}
	line := in[:nl]
	if nl > 0 && line[nl-1] == '\r' {
		line = line[:nl-1]
	}
	args, ok := sds.SplitArgs(line)
	if !ok {
		f.protocolError("unbalanced quotes in request")
		return false
	}
	f.consume(nl + 1)
	if len(args) > 0 {
		at := len(f.argv)
		f.argv = append(f.argv, args...)
		f.cmds = append(f.cmds, f.argv[at:len(f.argv):len(f.argv)])
		f.last = f.req
	}
	f.req = f.pos
	return true
}

// lineEnd finds the '\r' ending a header line; ok is false while the line
// or the byte after its '\r' has not arrived. big names the error for a
// line that grows past Redis's limit.
func (f *Framer) lineEnd(big string) (int, bool) {
	in := f.pending()
	cr := f.findLineEnd('\r')
	if cr < 0 {
		if len(in) > protoInlineMax {
			f.protocolError(big)
		}
		return 0, false
	}
	if cr > len(in)-2 {
		return 0, false
	}
	return cr, true
}

func (f *Framer) unauth() bool { return f.Unauth != nil && f.Unauth() }

func (f *Framer) multibulkHeader() bool {
	cr, ok := f.lineEnd("too big mbulk count string")
	if !ok {
		return false
	}
	ll, ok := f.headerLen(f.pending()[1:cr], math.MinInt64, maxMultibulkLen, unauthMultibulkLen, "multibulk")
	if !ok {
		return false
	}
	f.consume(cr + 2)
	if ll <= 0 {
		f.req = f.pos
		return true // an empty request: nothing to run
	}
	f.marks = f.marks[:0]
	f.args = ll
	f.st = stBulkLen
	return true
}

func (f *Framer) bulkHeader() bool {
	cr, ok := f.lineEnd("too big bulk count string")
	if !ok {
		return false
	}
	in := f.pending()
	if in[0] != '$' {
		f.protocolError("expected '$', got '" + string(in[0:1]) + "'")
		return false
	}
	ll, ok := f.headerLen(in[1:cr], 0, ProtoMaxBulkLen, unauthBulkLen, "bulk")
	if !ok {
		return false
	}
	f.consume(cr + 2)
	start := f.pos - f.req
	f.marks = append(f.marks, start, start+int(ll))
	f.bulk = ll
	f.st = stBulkData
	if ll == 0 {
		f.st = stBulkTail
	}
	return true
}

// headerLen parses a header's length, which must lie in [lo, hi], and
// at most unauthMax before AUTH; what names the header in Redis's errors.
func (f *Framer) headerLen(b []byte, lo, hi, unauthMax int64, what string) (int64, bool) {
	ll, ok := parseInt(b)
	switch {
	case !ok || ll < lo || ll > hi:
		f.protocolError("invalid " + what + " length")
		return 0, false
	case ll > unauthMax && f.unauth():
		f.protocolError("unauthenticated " + what + " length")
		return 0, false
	}
	return ll, true
}

// protocolError drops the request being parsed and stops parsing: the
// requests before it are returned, then the error.
func (f *Framer) protocolError(msg string) {
	f.stop = &ProtocolError{Msg: msg}
	f.st = stDead
	f.marks = f.marks[:0]
}

// parseInt parses a length as Redis's string2ll does: an optional '-',
// then decimal digits without a leading zero (or "0" alone), in range.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) >= 21 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || b[0] < '1' || b[0] > '9' {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' || v > math.MaxUint64/10 {
			return 0, false
		}
		v *= 10
		if v > math.MaxUint64-uint64(c-'0') {
			return 0, false
		}
		v += uint64(c - '0')
	}
	switch {
	case neg && v > 1<<63:
		return 0, false
	case neg:
		return -int64(v), true
	case v > math.MaxInt64:
		return 0, false
	}
	return int64(v), true
}

// readAheadMax bounds what WatchClose buffers while a client is blocked.
const readAheadMax = 64 << 20

// WatchClose starts reading ahead in the background and returns a channel
// closed when the client disconnects (or its connection fails). StopWatch
// ends it; what was read stays buffered for the next read. It reads the
// net.Conn: never in raw mode, whose caller holds the socket's read lock.
func (f *Framer) WatchClose() <-chan struct{} {
	closed := make(chan struct{})
	f.mu.Lock()
	f.reading = true
	f.done = make(chan struct{})
	done := f.done
	f.mu.Unlock()
	go func() {
		defer close(done)
		var buf [readChunk]byte
		for {
			n, err := f.conn.Read(buf[:])
			f.countIn(n)
			f.mu.Lock()
			f.in = append(f.in, buf[:n]...)
			full := len(f.in)-f.pos > readAheadMax || (f.Limit != nil && int64(len(f.in)) > f.Limit.Load())
			stopping := !f.reading
			if err != nil && !stopping {
				f.err = err
			}
			f.mu.Unlock()
			switch {
			case err != nil && !stopping:
				close(closed)
				return
			case err != nil, full, stopping:
				return
			}
		}
	}()
	return closed
}

// StopWatch ends the read-ahead started by WatchClose and waits for it.
func (f *Framer) StopWatch() {
	f.mu.Lock()
	if !f.reading {
		f.mu.Unlock()
		return
	}
	f.reading = false
	done := f.done
	f.mu.Unlock()
	f.conn.SetReadDeadline(time.Unix(1, 0))
	<-done
	f.conn.SetReadDeadline(time.Time{})
}

// waitReadAhead makes sure no background read is running: the blocked
// command calls StopWatch before the next read, so this is a safeguard.
func (f *Framer) waitReadAhead() {
	f.mu.Lock()
	r := f.reading
	f.mu.Unlock()
	if r {
		f.StopWatch()
	}
}
