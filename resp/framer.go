package resp

import (
	"bytes"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/goblindb/goblin/command"
)

// framedConn sits between a client's connection and redcon. It reads the
// client's bytes with Redis's own request parser rules (processInlineBuffer
// and processMultibulkBuffer) and hands redcon canonical RESP, so that:
//
//   - inline commands are split as Redis splits them (sdssplitargs: quotes,
//     \xHH escapes) rather than as redcon would;
//   - framing Redis tolerates is tolerated ("*0", "*-1", any two bytes
//     after a bulk string's data);
//   - framing Redis refuses gets Redis's "Protocol error: ..." text, after
//     the requests that preceded it ran, and then the connection closes;
//   - limits are Redis's (512 MB bulk strings, INT_MAX arguments, 64 KB
//     lines, smaller ones before AUTH), so a huge length cannot make the
//     server buffer without bound.
//
// On a protocol error the request being parsed is dropped; once redcon has
// read every request before it (their replies are then written: redcon
// flushes before it reads again), framedConn writes the error itself and
// ends the stream, and redcon closes the connection.
//
// While its client is blocked (BZPOPMIN), the connection's goroutine is
// not reading; watchClose then reads ahead in the background to notice a
// disconnect, keeping what it reads for redcon.
type framedConn struct {
	net.Conn
	// unauth reports whether the client has not authenticated yet.
	unauth func() bool

	in       []byte // raw bytes received; in[inPos:] is not parsed yet
	inPos    int
	out      []byte // canonical bytes; out[outPos:] is not read by redcon yet
	outPos   int
	scanned  int  // pending bytes already searched for the current line's end
	nul      bool // a NUL byte ends the search for the current line's end
	cmdStart int  // where the request being parsed starts in out
	partial  bool // redcon has read part of the request being parsed
	st       frameState
	args     int64  // arguments left in the current request
	bulk     int64  // bytes left in the current bulk string's data
	err      error  // the connection's read error, returned once out is empty
	protoErr []byte // the protocol error reply to write once out is empty

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
)

func newFramedConn(c net.Conn) *framedConn {
	return &framedConn{Conn: c, unauth: func() bool { return false }}
}

// Read hands redcon canonical RESP.
//
// When nothing is buffered, Read reads straight into redcon's buffer and
// checks the bytes where they are: requests that are already canonical,
// as every client library sends them, pass through without a copy. From
// the first byte that is not (an inline command, a header split across
// reads, anything Redis would reject), the rest goes through parse.
func (f *framedConn) Read(p []byte) (int, error) {
	f.waitReadAhead()
	if f.outPos == len(f.out) && f.inPos == len(f.in) && f.st != stDead && f.err == nil && len(p) > 0 {
		n, err := f.Conn.Read(p)
		if err != nil {
			f.err = err
		}
		k := f.scanInPlace(p[:n])
		if k < n {
			f.in, f.inPos = append(f.in[:0], p[k:n]...), 0
			f.scanned, f.nul = 0, false
			f.partial = f.st != stStart // redcon gets the request's start
			f.out, f.outPos, f.cmdStart = f.out[:0], 0, 0
		}
		if k > 0 {
			return k, nil
		}
	}
	for f.outPos == len(f.out) {
		if f.st != stStart {
			f.partial = true // the request in progress began in what was read
		}
		f.out, f.outPos, f.cmdStart = f.out[:0], 0, 0
		if f.st == stDead {
			if f.protoErr != nil {
				f.Conn.Write(f.protoErr)
				f.protoErr = nil
			}
			return 0, io.EOF
		}
		f.parse()
		if len(f.out) > 0 || f.st == stDead {
			continue
		}
		if f.err != nil {
			return 0, f.err
		}
		f.fill()
	}
	n := copy(p, f.out[f.outPos:])
	f.outPos += n
	return n, nil
}

// scanInPlace advances the parser over the canonical requests at the
// start of b, which redcon may read as they are, and returns how many
// bytes that is. It stops, leaving the state at a boundary parse can
// resume from, at the first byte that needs parse.
func (f *framedConn) scanInPlace(b []byte) int {
	i := 0
	for i < len(b) {
		switch f.st {
		case stStart:
			ll, n := canonicalHeader(b[i:], '*')
			if n == 0 || ll < 1 || ll > maxMultibulkLen || (ll > unauthMultibulkLen && f.unauth()) {
				return i
			}
			f.args, f.st = ll, stBulkLen
			i += n
		case stBulkLen:
			ll, n := canonicalHeader(b[i:], '$')
			if n == 0 || ll > protoMaxBulkLen || (ll > unauthBulkLen && f.unauth()) {
				return i
			}
			f.bulk, f.st = ll, stBulkData
			if ll == 0 {
				f.st = stBulkTail
			}
			i += n
		case stBulkData:
			k := int(min(f.bulk, int64(len(b)-i)))
			i += k
			if f.bulk -= int64(k); f.bulk == 0 {
				f.st = stBulkTail
			}
		case stBulkTail:
			if len(b)-i < 2 || b[i] != '\r' || b[i+1] != '\n' {
				return i
			}
			i += 2
			if f.args--; f.args == 0 {
				f.st = stStart
			} else {
				f.st = stBulkLen
			}
		default:
			return i
		}
	}
	return i
}

// canonicalHeader reads a complete "<c><n>\r\n" line with n a canonical
// non-negative integer; n is 0 when b does not start with one.
func canonicalHeader(b []byte, c byte) (int64, int) {
	if len(b) < 4 || b[0] != c {
		return 0, 0
	}
	for i := 1; i < len(b) && i < 22; i++ {
		if b[i] == '\r' {
			if i+1 >= len(b) || b[i+1] != '\n' {
				return 0, 0
			}
			v, ok := command.ParseInt(b[1:i])
			if !ok || v < 0 {
				return 0, 0
			}
			return v, i + 2
		}
	}
	return 0, 0
}

// pending returns the received bytes not parsed yet.
func (f *framedConn) pending() []byte { return f.in[f.inPos:] }

// fill reads once from the connection, first compacting f.in.
func (f *framedConn) fill() {
	rest := copy(f.in, f.in[f.inPos:])
	f.in, f.inPos = f.in[:rest], 0
	if cap(f.in)-len(f.in) < readChunk {
		nb := make([]byte, len(f.in), 2*cap(f.in)+readChunk)
		copy(nb, f.in)
		f.in = nb
	}
	n, err := f.Conn.Read(f.in[len(f.in):cap(f.in)])
	f.in = f.in[:len(f.in)+n]
	if err != nil {
		f.err = err
	}
}

// consume drops n parsed bytes.
func (f *framedConn) consume(n int) {
	f.inPos += n
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

// parse turns as much of the received bytes as it can into canonical
// RESP in f.out.
func (f *framedConn) parse() {
	for f.inPos < len(f.in) && f.st != stDead {
		in := f.pending()
		switch f.st {
		case stStart:
			f.cmdStart, f.partial = len(f.out), false
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
			f.out = append(f.out, in[:k]...)
			f.consume(k)
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
			f.out = append(f.out, '\r', '\n')
			f.args--
			if f.args == 0 {
				f.st = stStart
			} else {
				f.st = stBulkLen
			}
		}
	}
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
	args, ok := splitArgs(line)
	if !ok {
		f.protocolError("unbalanced quotes in request")
		return false
	}
	f.consume(nl + 1)
	if len(args) > 0 {
		f.appendCommand(args)
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
		return true // an empty request: nothing to run
	}
	f.out = append(f.out, '*')
	f.out = strconv.AppendInt(f.out, ll, 10)
	f.out = append(f.out, '\r', '\n')
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
	f.out = append(f.out, '$')
	f.out = strconv.AppendInt(f.out, ll, 10)
	f.out = append(f.out, '\r', '\n')
	f.bulk = ll
	f.st = stBulkData
	if ll == 0 {
		f.st = stBulkTail
	}
	return true
}

// appendCommand writes args as a RESP multibulk request.
func (f *framedConn) appendCommand(args [][]byte) {
	f.out = append(f.out, '*')
	f.out = strconv.AppendInt(f.out, int64(len(args)), 10)
	f.out = append(f.out, '\r', '\n')
	for _, a := range args {
		f.out = append(f.out, '$')
		f.out = strconv.AppendInt(f.out, int64(len(a)), 10)
		f.out = append(f.out, '\r', '\n')
		f.out = append(f.out, a...)
		f.out = append(f.out, '\r', '\n')
	}
}

// protocolError drops the request being parsed and stops parsing: Read
// reports msg once redcon has read the requests before it.
func (f *framedConn) protocolError(msg string) {
	cut := f.cmdStart
	if f.partial || cut < f.outPos {
		cut = f.outPos // redcon holds the request's start: it never completes
	}
	f.out = f.out[:cut]
	f.protoErr = []byte("-ERR Protocol error: " + msg + "\r\n")
	f.st = stDead
	f.in, f.inPos = nil, 0
}

// splitArgs is Redis's sdssplitargs over a C string: blanks separate
// arguments, "double quotes" take \xHH and \n \r \t \b \a escapes,
// 'single quotes' take \', and a closing quote must end its argument.
// ok is false for unbalanced quotes.
func splitArgs(line []byte) ([][]byte, bool) {
	line = cstrBytes(line)
	var args [][]byte
	p := 0
	at := func(i int) byte {
		if i < len(line) {
			return line[i]
		}
		return 0
	}
	for {
		for p < len(line) && isSpace(line[p]) {
			p++
		}
		if p >= len(line) {
			return args, true
		}
		cur := []byte{}
		var quote byte // the open quote, 0 outside quotes
		for done := false; !done; {
			c := at(p)
			switch {
			case quote == 0:
				switch c {
				case ' ', '\n', '\r', '\t', 0:
					done = true
				case '"', '\'':
					quote = c
				default:
					cur = append(cur, c)
				}
			case quote == '"' && c == '\\' && at(p+1) == 'x' && isHexDigit(at(p+2)) && isHexDigit(at(p+3)):
				cur = append(cur, hexVal(at(p+2))<<4|hexVal(at(p+3)))
				p += 3
			case quote == '"' && c == '\\' && at(p+1) != 0:
				p++
				cur = append(cur, unescape(at(p)))
			case quote == '\'' && c == '\\' && at(p+1) == '\'':
				p++
				cur = append(cur, '\'')
			case c == quote:
				if !argEnds(at(p + 1)) {
					return nil, false
				}
				done = true
			case c == 0:
				return nil, false // unterminated quotes
			default:
				cur = append(cur, c)
			}
			if at(p) != 0 {
				p++
			}
		}
		args = append(args, cur)
	}
}

// unescape maps the letter after a backslash in double quotes.
func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'a':
		return '\a'
	}
	return c
}

// argEnds reports whether c may follow a closing quote: the end of the
// line or a blank.
func argEnds(c byte) bool { return c == 0 || isSpace(c) }

func cstrBytes(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func isHexDigit(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func hexVal(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
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
			f.mu.Lock()
			f.in = append(f.in, buf[:n]...)
			full := len(f.in)-f.inPos > readAheadMax
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
