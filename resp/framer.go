package resp

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goblindb/goblin/command"
	"github.com/goblindb/goblin/internal/sds"
	"github.com/goblindb/goblin/resp/wire"
)

// framedConn is a client's connection and its request parser: the only
// one. It reads the client's bytes with Redis's own request parser rules
// (processInlineBuffer and processMultibulkBuffer), so that:
//
//   - inline commands are split as Redis splits them (sdssplitargs: quotes,
//     \xHH escapes);
//   - framing Redis tolerates is tolerated ("*0", "*-1", any two bytes
//     after a bulk string's data);
//   - framing Redis refuses gets Redis's "Protocol error: ..." text, after
//     the requests that preceded it ran, and then the connection closes;
//   - limits are Redis's (512 MB bulk strings, INT_MAX arguments, 64 KB
//     lines, smaller ones before AUTH), so a huge length cannot make the
//     server buffer without bound, and client-query-buffer-limit bounds
//     the bytes of requests not yet complete (querybuf.go).
//
// readBatch returns every complete request received so far as argument
// slices pointing into the connection's buffer: no copy, no allocation
// per request. redcon accepts the connection and runs its first request,
// which it reads through Read (the request re-encoded as canonical RESP);
// then the connection is detached from redcon and served from readBatch
// (Server.handle).
//
// On a protocol error the request being parsed is dropped: readBatch
// returns the requests before it, and on the next call (their replies
// written) writes the error itself and reports io.EOF.
//
// While its client is blocked (BZPOPMIN), the connection's goroutine is
// not reading; watchClose then reads ahead in the background to notice a
// disconnect, keeping what it reads for the parser.
type framedConn struct {
	net.Conn
	// unauth reports whether the client has not authenticated yet.
	unauth func() bool
	// limit is client-query-buffer-limit (nil: none); overLimit is told
	// the buffer's first bytes when it passes it, before the connection
	// closes.
	limit     *atomic.Int64
	overLimit func(initial []byte)
	// netIn counts the bytes read (nil: not counted).
	netIn *atomic.Int64

	// in holds the bytes received: in[:req] the requests already returned
	// (valid until the next readBatch), in[req:pos] the part of the
	// request being parsed that was parsed, in[pos:] the rest.
	in       []byte
	req      int
	pos      int
	marks    []int // argument bounds of the request being parsed, relative to req
	argv     [][]byte
	cmds     [][][]byte
	scanned  int  // pending bytes already searched for the current line's end
	nul      bool // a NUL byte ends the search for the current line's end
	st       frameState
	args     int64  // arguments left in the current request
	bulk     int64  // bytes left in the current bulk string's data
	err      error  // the connection's read error, returned once nothing is left
	protoErr []byte // the protocol error reply to write once the requests before it ran

	first []byte // Read's canonical bytes not yet read

	// Background read-ahead while blocked.
	mu      sync.Mutex
	reading bool
	done    chan struct{}
}

type frameState uint8

const (
	stStart    frameState = iota // at the start of a request
	stBulkLen                    // expecting "$<len>\r\n"
	stBulkData                   // inside a bulk string's data
	stBulkTail                   // the two bytes after the data
	stDead                       // a protocol error was reported
)

// Redis's request limits.
const (
	protoInlineMax     = 64 * 1024         // PROTO_INLINE_MAX_SIZE
	protoMaxBulkLen    = 512 * 1024 * 1024 // proto-max-bulk-len default
	maxMultibulkLen    = 1<<31 - 1         // INT_MAX
	unauthMultibulkLen = 10
	unauthBulkLen      = 16384
	readChunk          = 16 * 1024
	// keepBuffer is the largest input buffer kept once it is empty.
	keepBuffer = 64 * 1024
)

func newFramedConn(c net.Conn) *framedConn {
	return &framedConn{Conn: c, unauth: func() bool { return false }}
}

// readBatch returns the complete requests received, reading from the
// connection when none is buffered; before such a read it calls flush
// (the replies of the requests before are then on their way). The
// argument slices stay valid until the next call.
func (f *framedConn) readBatch(flush func() error) ([][][]byte, error) {
	f.waitReadAhead()
	f.release()
	for {
		if f.st == stDead {
			if flush != nil {
				flush()
			}
			if f.protoErr != nil {
				f.Conn.Write(f.protoErr)
				f.protoErr = nil
			}
			return nil, io.EOF
		}
		f.parse(-1)
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
		f.fill()
	}
}

// bufStats returns the bytes of the query buffer received and not yet
// run (the batch returned included) and its free space.
func (f *framedConn) bufStats() (used, free int) { return len(f.in), cap(f.in) - len(f.in) }

// buffered reports whether received bytes wait to be parsed.
func (f *framedConn) buffered() bool { return f.pos < len(f.in) || f.st == stDead }

// release forgets the requests returned by the last readBatch.
func (f *framedConn) release() {
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

// Read hands redcon the next request as canonical RESP; redcon reads the
// first request of a connection this way, before handle detaches it.
func (f *framedConn) Read(p []byte) (int, error) {
	if len(f.first) == 0 {
		f.waitReadAhead()
		f.release()
		for len(f.cmds) == 0 {
			if f.st == stDead {
				if f.protoErr != nil {
					f.Conn.Write(f.protoErr)
					f.protoErr = nil
				}
				return 0, io.EOF
			}
			f.parse(1)
			if len(f.cmds) > 0 || f.st == stDead {
				continue
			}
			if f.err != nil {
				return 0, f.err
			}
			f.fill()
		}
		f.first = wire.AppendCommand(f.first[:0], f.cmds[0]...)
	}
	n := copy(p, f.first)
	f.first = f.first[n:]
	return n, nil
}

// countIn counts n bytes read from the client (total_net_input_bytes).
func (f *framedConn) countIn(n int) {
	if f.netIn != nil && n > 0 {
		f.netIn.Add(int64(n))
	}
}

// fill reads once from the connection, first moving the request being
// parsed to the start of the buffer (no request is returned: nothing
// points into it).
func (f *framedConn) fill() {
	rest := copy(f.in, f.in[f.req:])
	f.in, f.pos, f.req = f.in[:rest], f.pos-f.req, 0
	if cap(f.in)-len(f.in) < readChunk/4 {
		size := 2*cap(f.in) + readChunk
		if f.limit != nil {
			// Past the limit by one read at most: then the client closes.
			size = int(min(int64(size), max(f.limit.Load(), int64(len(f.in)))+readChunk))
		}
		nb := make([]byte, len(f.in), size)
		copy(nb, f.in)
		f.in = nb
	}
	n, err := f.Conn.Read(f.in[len(f.in):cap(f.in)])
	f.in = f.in[:len(f.in)+n]
	f.countIn(n)
	if err != nil {
		f.err = err
	}
	if f.limit != nil && int64(len(f.in)) > f.limit.Load() {
		f.queryBufferExceeded()
	}
}

// queryBufferExceeded drops the buffer of a client that passed the query
// buffer limit and ends the connection: nothing more is parsed or run,
// and no reply is written.
func (f *framedConn) queryBufferExceeded() {
	if f.overLimit != nil {
		f.overLimit(f.in[:min(len(f.in), 64)])
	}
	f.in, f.req, f.pos = nil, 0, 0
	f.marks = f.marks[:0]
	f.protoErr = nil
	f.st = stDead
}

// pending returns the received bytes not parsed yet.
func (f *framedConn) pending() []byte { return f.in[f.pos:] }

// consume drops n parsed bytes.
func (f *framedConn) consume(n int) {
	f.pos += n
	f.scanned, f.nul = 0, false
}

// findLineEnd finds c in the pending bytes as C's strchr would in Redis's
// NUL-terminated buffer (a NUL byte ends the search), resuming where the
// previous search of the same line stopped: a line arriving byte by byte
// costs linear time.
func (f *framedConn) findLineEnd(c byte) int {
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
func (f *framedConn) parse(max int) {
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
func (f *framedConn) complete() {
	at := len(f.argv)
	base := f.in[f.req:f.pos]
	for i := 0; i < len(f.marks); i += 2 {
		s, e := f.marks[i], f.marks[i+1]
		f.argv = append(f.argv, base[s:e:e])
	}
	f.marks = f.marks[:0]
	f.cmds = append(f.cmds, f.argv[at:len(f.argv):len(f.argv)])
	f.st = stStart
	f.req = f.pos
}

// inline parses one inline request; false when the line is incomplete.
func (f *framedConn) inline() bool {
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
	f.req = f.pos
	if len(args) > 0 {
		at := len(f.argv)
		f.argv = append(f.argv, args...)
		f.cmds = append(f.cmds, f.argv[at:len(f.argv):len(f.argv)])
	}
	return true
}

// lineEnd finds the '\r' ending a header line; ok is false while the line
// or the byte after its '\r' has not arrived. big names the error for a
// line that grows past Redis's limit.
func (f *framedConn) lineEnd(big string) (int, bool) {
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

func (f *framedConn) multibulkHeader() bool {
	cr, ok := f.lineEnd("too big mbulk count string")
	if !ok {
		return false
	}
	ll, ok := command.ParseInt(f.pending()[1:cr])
	switch {
	case !ok || ll > maxMultibulkLen:
		f.protocolError("invalid multibulk length")
		return false
	case ll > unauthMultibulkLen && f.unauth():
		f.protocolError("unauthenticated multibulk length")
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

func (f *framedConn) bulkHeader() bool {
	cr, ok := f.lineEnd("too big bulk count string")
	if !ok {
		return false
	}
	in := f.pending()
	if in[0] != '$' {
		f.protocolError("expected '$', got '" + string(in[0:1]) + "'")
		return false
	}
	ll, ok := command.ParseInt(in[1:cr])
	switch {
	case !ok || ll < 0 || ll > protoMaxBulkLen:
		f.protocolError("invalid bulk length")
		return false
	case ll > unauthBulkLen && f.unauth():
		f.protocolError("unauthenticated bulk length")
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

// protocolError drops the request being parsed and stops parsing: the
// requests before it are returned, then the error is written.
func (f *framedConn) protocolError(msg string) {
	f.protoErr = []byte("-ERR Protocol error: " + msg + "\r\n")
	f.st = stDead
	f.marks = f.marks[:0]
}

// readAheadMax bounds what watchClose buffers while a client is blocked.
const readAheadMax = 64 << 20

// watchClose starts reading ahead in the background and returns a channel
// closed when the client disconnects (or its connection fails). stopWatch
// ends it; what was read stays buffered for redcon.
func (f *framedConn) watchClose() <-chan struct{} {
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
			n, err := f.Conn.Read(buf[:])
			f.countIn(n)
			f.mu.Lock()
			f.in = append(f.in, buf[:n]...)
			full := len(f.in)-f.pos > readAheadMax || (f.limit != nil && int64(len(f.in)) > f.limit.Load())
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

// stopWatch ends the read-ahead started by watchClose and waits for it.
func (f *framedConn) stopWatch() {
	f.mu.Lock()
	if !f.reading {
		f.mu.Unlock()
		return
	}
	f.reading = false
	done := f.done
	f.mu.Unlock()
	f.Conn.SetReadDeadline(time.Unix(1, 0))
	<-done
	f.Conn.SetReadDeadline(time.Time{})
}

// waitReadAhead makes sure no background read is running. Only redcon's
// goroutine calls Read, after the blocked command called stopWatch, so
// this is a safeguard.
func (f *framedConn) waitReadAhead() {
	f.mu.Lock()
	r := f.reading
	f.mu.Unlock()
	if r {
		f.stopWatch()
	}
}

var _ net.Conn = (*framedConn)(nil)
