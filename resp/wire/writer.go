package wire

import (
	"errors"
	"strconv"
	"strings"

	"github.com/goblindb/goblin/internal/bulkcopy"
)

// Writer appends replies in RESP2 or RESP3 to a byte buffer. The zero
// value writes RESP2 with Redis 7.2's double format.
type Writer struct {
	buf    []byte
	Proto  int          // 2 or 3
	Format DoubleFormat // how doubles are written
	// Limit, when positive, is the length at which Full reports true: the
	// client's output buffer limit. Commands whose replies grow element
	// by element without a bound of their own (ZRANDMEMBER with
	// repetition, ranges) stop writing once it is reached, as Redis stops
	// them once the client is to be closed; the edge then closes the
	// client and the cut reply is never sent.
	Limit int
	// Room, when set, is asked by Full for room for the buffer's n bytes
	// once they pass RoomTo: it returns the new RoomTo, and false when
	// there is no more room (Full then reports true, as at the Limit).
	// It is how a client's replies draw on a budget shared with others.
	Room   func(n int) (to int, ok bool)
	RoomTo int
}

// Full reports whether the writer has reached its Limit, or has no Room
// for what it holds.
func (w *Writer) Full() bool {
	n := len(w.buf)
	if w.Limit > 0 && n >= w.Limit {
		return true
	}
	if n > w.RoomTo && w.Room != nil {
		to, ok := w.Room(n)
		w.RoomTo = to
		return !ok
	}
	return false
}

// NewWriter returns a writer for protocol proto (2 or 3).
func NewWriter(proto int) *Writer { return &Writer{Proto: proto} }

// Bytes returns the replies written so far.
func (w *Writer) Bytes() []byte { return w.buf }

// Len returns the number of bytes written so far.
func (w *Writer) Len() int { return len(w.buf) }

// Cap returns the capacity of the buffer.
func (w *Writer) Cap() int { return cap(w.buf) }

// Reset empties the buffer, keeping its memory.
func (w *Writer) Reset() { w.buf = w.buf[:0] }

// Truncate drops everything written after the first n bytes.
func (w *Writer) Truncate(n int) { w.buf = w.buf[:n] }

// RESP3 reports whether replies are written in RESP3.
func (w *Writer) RESP3() bool { return w.Proto >= 3 }

func (w *Writer) header(c byte, n int64) {
	w.buf = append(w.buf, c)
	w.buf = strconv.AppendInt(w.buf, n, 10)
	w.buf = append(w.buf, '\r', '\n')
}

// Simple writes a simple string (+OK).
func (w *Writer) Simple(s string) {
	w.buf = append(w.buf, '+')
	w.buf = append(w.buf, s...)
	w.buf = append(w.buf, '\r', '\n')
}

// OK writes +OK.
func (w *Writer) OK() { w.buf = append(w.buf, "+OK\r\n"...) }

// ReplyError is an error that carries its reply's text, code first
// (command.Error): Writer.Error writes it as is.
type ReplyError interface {
	error
	ReplyText() string
}

// Error writes an error reply: a ReplyError's text as is, any other
// error's text after the ERR code, on one line.
func (w *Writer) Error(err error) {
	var re ReplyError
	w.buf = append(w.buf, '-')
	if errors.As(err, &re) {
		w.buf = append(w.buf, re.ReplyText()...)
	} else {
		w.buf = append(w.buf, "ERR "...)
		w.buf = append(w.buf, OneLine(err.Error())...)
	}
	w.buf = append(w.buf, '\r', '\n')
}

// OneLine replaces the line breaks in an error's text by spaces, as Redis
// does: an error reply is one line.
func OneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	b := []byte(s)
	for i, c := range b {
		if c == '\r' || c == '\n' {
			b[i] = ' '
		}
	}
	return string(b)
}

// Int writes an integer reply.
func (w *Writer) Int(n int64) { w.header(':', n) }

// Bulk writes a bulk string.
func (w *Writer) Bulk(b []byte) {
	w.header('$', int64(len(b)))
	w.buf = bulkcopy.Append(w.buf, b)
	w.buf = append(w.buf, '\r', '\n')
}

// BulkString writes a bulk string.
func (w *Writer) BulkString(s string) {
	w.header('$', int64(len(s)))
	w.buf = append(w.buf, s...)
	w.buf = append(w.buf, '\r', '\n')
}

// Verbatim writes a RESP3 verbatim string of format "txt" (a bulk string in
// RESP2), as Redis replies to INFO and CLIENT LIST.
func (w *Writer) Verbatim(s string) {
	if !w.RESP3() {
		w.BulkString(s)
		return
	}
	w.header('=', int64(len(s)+4))
	w.buf = append(w.buf, "txt:"...)
	w.buf = append(w.buf, s...)
	w.buf = append(w.buf, '\r', '\n')
}

// Null writes a null bulk string ($-1 in RESP2, _ in RESP3).
func (w *Writer) Null() {
	if w.RESP3() {
		w.buf = append(w.buf, "_\r\n"...)
	} else {
		w.buf = append(w.buf, "$-1\r\n"...)
	}
}

// NullArray writes a null array (*-1 in RESP2, _ in RESP3).
func (w *Writer) NullArray() {
	if w.RESP3() {
		w.buf = append(w.buf, "_\r\n"...)
	} else {
		w.buf = append(w.buf, "*-1\r\n"...)
	}
}

// Double writes a double (a bulk string in RESP2, ',' in RESP3).
func (w *Writer) Double(f float64) {
	var tmp [40]byte
	d := AppendDouble(tmp[:0], f, w.Format)
	if w.RESP3() {
		w.buf = append(w.buf, ',')
		w.buf = append(w.buf, d...)
		w.buf = append(w.buf, '\r', '\n')
		return
	}
	w.Bulk(d)
}

// Array writes an array header for n elements.
func (w *Writer) Array(n int) { w.header('*', int64(n)) }

// Map writes a map header for n key/value pairs (an array of 2n in RESP2).
func (w *Writer) Map(n int) {
	if w.RESP3() {
		w.header('%', int64(n))
	} else {
		w.header('*', int64(2*n))
	}
}

// Set writes a set header for n elements (an array in RESP2).
func (w *Writer) Set(n int) {
	if w.RESP3() {
		w.header('~', int64(n))
	} else {
		w.header('*', int64(n))
	}
}

// Bool writes a boolean (RESP3 #t/#f; integer 1/0 in RESP2).
func (w *Writer) Bool(b bool) {
	switch {
	case w.RESP3() && b:
		w.buf = append(w.buf, "#t\r\n"...)
	case w.RESP3():
		w.buf = append(w.buf, "#f\r\n"...)
	case b:
		w.Int(1)
	default:
		w.Int(0)
	}
}

// Raw appends bytes that are already RESP.
func (w *Writer) Raw(b []byte) { w.buf = append(w.buf, b...) }

// DeferArray reserves room for an array header whose length is only known
// after the elements are written; SetDeferredArray fills it in.
func (w *Writer) DeferArray() int {
	at := len(w.buf)
	w.buf = append(w.buf, make([]byte, deferredLen)...)
	return at
}

const deferredLen = 24 // room for "*<20 digits>\r\n"

// SetDeferredArray fills the header reserved at offset at with an array of
// n elements, closing the gap.
func (w *Writer) SetDeferredArray(at int, n int) {
	var tmp [deferredLen]byte
	h := append(tmp[:0], '*')
	h = strconv.AppendInt(h, int64(n), 10)
	h = append(h, '\r', '\n')
	copy(w.buf[at:], h)
	w.buf = append(w.buf[:at+len(h)], w.buf[at+deferredLen:]...)
}
