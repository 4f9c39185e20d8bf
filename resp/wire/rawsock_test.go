//go:build linux

package wire

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	mrand "math/rand"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"
)

// tlsPair is a TLS session over a loopback TCP connection: the server's
// side over a RawSocket, whose descriptor is fd; the client's records
// written after the handshake are held (take) until the test sends them
// on the client's socket (cl).
type tlsPair struct {
	sock   *RawSocket
	server *tls.Conn
	fd     int
	client *tls.Conn
	cl     net.Conn
	out    *heldWrites
}

// heldWrites passes writes through to its conn until hold is set, then
// keeps them.
type heldWrites struct {
	net.Conn
	mu   sync.Mutex
	hold bool
	buf  []byte
}

func (h *heldWrites) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.hold {
		h.buf = append(h.buf, p...)
		return len(p), nil
	}
	return h.Conn.Write(p)
}

// SetWriteDeadline does nothing: the test writes the held bytes after the
// session's CloseWrite, which sets a deadline in the past.
func (h *heldWrites) SetWriteDeadline(time.Time) error { return nil }

// take returns the bytes held so far.
func (h *heldWrites) take() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	b := h.buf
	h.buf = nil
	return b
}

func newTLSPair(t *testing.T) *tlsPair {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cl, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	sv, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	p := &tlsPair{sock: NewRawSocket(sv), cl: cl, out: &heldWrites{Conn: cl}}
	t.Cleanup(func() { cl.Close(); sv.Close() })
	p.server = tls.Server(p.sock, &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}})
	p.client = tls.Client(p.out, &tls.Config{InsecureSkipVerify: true})
	errs := make(chan error, 1)
	go func() { errs <- p.client.Handshake() }()
	if err := p.server.Handshake(); err != nil {
		t.Fatal(err)
	}
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	rc, err := sv.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	rc.Control(func(fd uintptr) { p.fd = int(fd) })
	p.out.hold = true
	return p
}

// write has the client write s as one TLS record, held.
func (p *tlsPair) write(t *testing.T, s string) {
	t.Helper()
	if _, err := p.client.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
}

// send sends b on the client's socket and waits until the server's
// socket has something to read.
func (p *tlsPair) send(t *testing.T, b []byte) {
	t.Helper()
	if _, err := p.cl.Write(b); err != nil {
		t.Fatal(err)
	}
	p.waitReadable(t)
}

func (p *tlsPair) waitReadable(t *testing.T) {
	t.Helper()
	var set syscall.FdSet
	set.Bits[p.fd/64] |= 1 << (uint(p.fd) % 64)
	tv := syscall.Timeval{Sec: 5}
	if n, err := syscall.Select(p.fd+1, &set, nil, nil, &tv); err != nil || n != 1 {
		t.Fatalf("the server's socket is not readable: %d, %v", n, err)
	}
}

// In raw mode a TLS session reads its socket once a request: a read that
// came back short is followed by a wait, not a second read, and a record
// that arrives in pieces is read as they arrive.
func TestRawSocketUnderTLS(t *testing.T) {
	p := newTLSPair(t)
	f := NewFramer(p.server)
	p.sock.BeginRaw(p.fd)
	p.write(t, "PING\r\n*2\r\n$4\r\nECHO\r\n$1\r\nx\r\n")
	p.send(t, p.out.take())
	cmds, err := f.ReadBatch(nil)
	if err != nil || len(cmds) != 2 || string(cmds[1][1]) != "x" {
		t.Fatalf("first batch: %q, %v", cmds, err)
	}
	// The short read emptied the socket: wait, without reading. What
	// arrives meanwhile is read after the wait.
	p.write(t, "PING\r\n")
	p.send(t, p.out.take())
	if _, err := f.ReadBatch(nil); err != ErrWouldBlock || !p.sock.WaitedUnread() {
		t.Fatalf("after a short read: %v, waited unread %v", err, p.sock.WaitedUnread())
	}
	if cmds, err := f.ReadBatch(nil); err != nil || len(cmds) != 1 {
		t.Fatalf("after the wait: %q, %v", cmds, err)
	}
	// A wake-up with nothing to read: the read finds nothing, and the
	// wait that follows comes after a read.
	if _, err := f.ReadBatch(nil); err != ErrWouldBlock || !p.sock.WaitedUnread() {
		t.Fatalf("second short read: %v", err)
	}
	if _, err := f.ReadBatch(nil); err != ErrWouldBlock || p.sock.WaitedUnread() {
		t.Fatalf("an empty socket: %v, waited unread %v", err, p.sock.WaitedUnread())
	}
	// A record in two pieces: the session keeps the first while it waits.
	p.write(t, "*2\r\n$4\r\nECHO\r\n$5\r\nhello\r\n")
	rec := p.out.take()
	p.send(t, rec[:7])
	for range 2 { // a read of the first piece, then a wait without a read
		if _, err := f.ReadBatch(nil); err != ErrWouldBlock {
			t.Fatalf("half a record: %v", err)
		}
	}
	p.send(t, rec[7:])
	if cmds, err := f.ReadBatch(nil); err != nil || len(cmds) != 1 || string(cmds[0][1]) != "hello" {
		t.Fatalf("the whole record: %q, %v", cmds, err)
	}
	// The session's close_notify is read as the end of the stream.
	if err := p.client.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	p.send(t, p.out.take())
	var end error
	for range 3 {
		if _, end = f.ReadBatch(nil); end != ErrWouldBlock {
			break
		}
	}
	if end != io.EOF {
		t.Fatalf("at the end: %v", end)
	}
	p.sock.EndRaw()
	if p.sock.fd != -1 || p.sock.drained {
		t.Fatal("EndRaw kept raw state")
	}
}

// Through a TLS session in raw mode, whatever the requests and however
// their records arrive (chunks of random sizes, each sent only once the
// Framer waits for the socket), ReadBatch returns what it returns for the
// same bytes in one read from a net.Conn.
func TestRawSocketUnderTLSChunks(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	r := mrand.New(mrand.NewSource(seed))
	inputs := []string{
		"*1\r\n$4\r\nPING\r\n",
		"*2\r\n$4\r\nECHO\r\n$0\r\n\r\n*0\r\n*-1\r\n",
		"PING\r\necho \"a b\"\n\r\n  \n",
		"*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r",
		"*1\r\n$01\r\n",
		"*2\r\n$4\r\nECHO\r\n$40000\r\n" + string(make([]byte, 40000)) + "\r\nPING\r\n",
	}
	for range 20 {
		b := make([]byte, r.Intn(300))
		for i := range b {
			b[i] = "*$\r\n0123456789PINGECHO -"[r.Intn(23)]
		}
		inputs = append(inputs, string(b))
	}
	for i, in := range inputs {
		p := newTLSPair(t)
		f := NewFramer(p.server)
		p.sock.BeginRaw(p.fd)
		// The client writes the input in pieces (records) of random sizes.
		for rest := in; rest != ""; {
			k := min(len(rest), 1+r.Intn(64))
			if r.Intn(4) == 0 {
				k = len(rest)
			}
			p.write(t, rest[:k])
			rest = rest[k:]
		}
		if err := p.client.CloseWrite(); err != nil {
			t.Fatal(err)
		}
		wire := p.out.take()
		got, err := collectWaiting(t, f, 2*len(wire)+4, func() {
			if len(wire) == 0 {
				p.cl.(*net.TCPConn).CloseWrite()
				p.waitReadable(t)
				return
			}
			k := min(len(wire), 1+r.Intn(200))
			p.send(t, wire[:k])
			wire = wire[k:]
		})
		if err != nil && err != io.EOF {
			t.Fatalf("input %d: ReadBatch: %v", i, err)
		}
		if want := frame(in, 1<<20, false); got != want {
			t.Fatalf("input %d (%q): through TLS in raw mode %q, in one read %q", i, in, got, want)
		}
	}
}
