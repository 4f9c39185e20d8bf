package e2e

import (
	"bufio"
	"bytes"
	"net"
	"testing"
	"time"

	"github.com/goblindb/goblin/resp/wire"
)

// RawConn speaks RESP on a TCP connection and returns each reply's exact
// bytes, for byte-for-byte comparisons with redis-server.
type RawConn struct {
	t  testing.TB
	c  net.Conn
	rd *bufio.Reader
}

// DialRaw connects to addr; the connection is closed at test end.
func DialRaw(t testing.TB, addr string) *RawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return &RawConn{t: t, c: c, rd: bufio.NewReader(c)}
}

// EncodeCommand returns argv as a RESP array of bulk strings.
func EncodeCommand(argv ...string) []byte { return wire.AppendCommandStrings(nil, argv...) }

// Do sends one command and returns the raw bytes of its reply.
func (r *RawConn) Do(argv ...string) []byte {
	r.t.Helper()
	r.Send(EncodeCommand(argv...))
	return r.Read()
}

// Send writes raw bytes.
func (r *RawConn) Send(b []byte) {
	r.t.Helper()
	r.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := r.c.Write(b); err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

// Read returns the raw bytes of the next reply.
func (r *RawConn) Read() []byte {
	r.t.Helper()
	r.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var out bytes.Buffer
	if err := wire.CopyReply(r.rd, &out); err != nil {
		r.t.Fatalf("read reply: %v (so far %q)", err, out.String())
	}
	return out.Bytes()
}
