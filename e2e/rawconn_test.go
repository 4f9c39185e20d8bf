package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"
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
func EncodeCommand(argv ...string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "*%d\r\n", len(argv))
	for _, a := range argv {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.Bytes()
}

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
	if err := readReply(r.rd, &out); err != nil {
		r.t.Fatalf("read reply: %v (so far %q)", err, out.String())
	}
	return out.Bytes()
}

// readReply copies one complete RESP2/RESP3 value from rd into out.
func readReply(rd *bufio.Reader, out *bytes.Buffer) error {
	line, err := rd.ReadBytes('\n')
	if err != nil {
		return err
	}
	out.Write(line)
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return fmt.Errorf("malformed line %q", line)
	}
	body := string(line[1 : len(line)-2])
	switch line[0] {
	case '+', '-', ':', ',', '_', '#', '(':
		return nil
	case '$', '=', '!':
		n, err := strconv.Atoi(body)
		if err != nil {
			return err
		}
		if n < 0 {
			return nil
		}
		buf := make([]byte, n+2)
		if _, err := readFull(rd, buf); err != nil {
			return err
		}
		out.Write(buf)
		return nil
	case '*', '~', '>':
		n, err := strconv.Atoi(body)
		if err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			if err := readReply(rd, out); err != nil {
				return err
			}
		}
		return nil
	case '%', '|':
		n, err := strconv.Atoi(body)
		if err != nil {
			return err
		}
		for i := 0; i < 2*n; i++ {
			if err := readReply(rd, out); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unknown reply type %q", line[0])
}

func readFull(rd *bufio.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		k, err := rd.Read(buf[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
