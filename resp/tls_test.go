package resp

import (
	"bufio"
	"crypto/tls"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/tlsconf"
)

// tlsFixture is a server certificate's Reloader and a client config that
// trusts it and presents a client certificate.
type tlsFixture struct {
	dir    string
	server *tlsconf.Reloader
	client *tls.Config
	files  map[string]tlsconf.Files
}

func newTLSFixture(t *testing.T) *tlsFixture {
	t.Helper()
	dir := t.TempDir()
	files, err := tlsconf.WriteSet(dir, []string{"127.0.0.1", "localhost"}, "server", "client")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := tlsconf.Load(files["server"])
	if err != nil {
		t.Fatal(err)
	}
	cli, err := tlsconf.Load(files["client"])
	if err != nil {
		t.Fatal(err)
	}
	return &tlsFixture{dir: dir, server: srv, client: cli.ClientConfig("localhost"), files: files}
}

// startTLSServer serves a fake backend on a TLS port, and a TCP port
// unless tlsOnly.
func startTLSServer(t *testing.T, cfg Config, fx *tlsFixture, tlsOnly bool) *Server {
	t.Helper()
	cfg.Addr = "127.0.0.1:0"
	if tlsOnly {
		cfg.Addr = ""
	}
	cfg.TLSAddr = "127.0.0.1:0"
	cfg.TLS = fx.server.ServerConfig(tls.RequireAndVerifyClientCert)
	s := NewServer(cfg, newFakeBackend())
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	s.Serve()
	t.Cleanup(func() { closeWithin(t, s, 15*time.Second) })
	return s
}

// closeWithin fails the test if s.Close takes longer than d.
func closeWithin(t *testing.T, s *Server, d time.Duration) {
	t.Helper()
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("Close did not return within %v", d)
	}
}

func dialTLS(t *testing.T, s *Server, cfg *tls.Config) *conn {
	t.Helper()
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", s.TLSAddr().String(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &conn{t: t, c: c, rd: bufio.NewReader(c)}
}

// TestTLSServedLikeTCP: the same commands, pipelining and AUTH on both
// ports of one server, and CONFIG GET reports both.
func TestTLSServedLikeTCP(t *testing.T) {
	fx := newTLSFixture(t)
	s := startTLSServer(t, Config{RequirePass: "pw"}, fx, false)
	for name, c := range map[string]*conn{"tcp": dial(t, s), "tls": dialTLS(t, s, fx.client)} {
		run(t, c, []exchange{
			{[]string{"PING"}, "-NOAUTH Authentication required.\r\n"},
			{[]string{"AUTH", "pw"}, "+OK\r\n"},
		})
		// A pipeline in one write.
		var p []byte
		for _, m := range []string{"a", "b", "c"} {
			p = append(p, encode("ZADD", "k-"+name, "1", m)...)
		}
		p = append(p, encode("ZCARD", "k-"+name)...)
		c.send(p)
		var got []string
		for range 4 {
			got = append(got, c.read())
		}
		if want := []string{":1\r\n", ":1\r\n", ":1\r\n", ":3\r\n"}; strings.Join(got, "") != strings.Join(want, "") {
			t.Errorf("%s: pipeline replies %q, want %q", name, got, want)
		}
		tcpPort, tlsPort := portOf(s.Addr().String()), portOf(s.TLSAddr().String())
		want := "*4\r\n$4\r\nport\r\n$" + strconv.Itoa(len(tcpPort)) + "\r\n" + tcpPort + "\r\n$8\r\ntls-port\r\n$" + strconv.Itoa(len(tlsPort)) + "\r\n" + tlsPort + "\r\n"
		if got := c.do("CONFIG", "GET", "port", "tls-port"); got != want {
			t.Errorf("%s: CONFIG GET port tls-port = %q, want %q", name, got, want)
		}
	}
}

// TestTLSOnly serves no plaintext TCP port: port and tcp_port read 0.
func TestTLSOnly(t *testing.T) {
	fx := newTLSFixture(t)
	s := startTLSServer(t, Config{}, fx, true)
	if s.Addr() != nil {
		t.Fatalf("Addr = %v without a TCP port", s.Addr())
	}
	c := dialTLS(t, s, fx.client)
	if got := c.do("CONFIG", "GET", "port"); got != "*2\r\n$4\r\nport\r\n$1\r\n0\r\n" {
		t.Errorf("CONFIG GET port = %q", got)
	}
	if got := c.do("INFO", "server"); !strings.Contains(got, "\r\ntcp_port:0\r\n") {
		t.Errorf("INFO server lacks tcp_port:0: %q", got)
	}
}

// TestTLSUnauthenticatedLimits: the limits on clients that have not
// authenticated hold on the TLS port.
func TestTLSUnauthenticatedLimits(t *testing.T) {
	fx := newTLSFixture(t)
	s := startTLSServer(t, Config{RequirePass: "pw"}, fx, true)
	c := dialTLS(t, s, fx.client)
	c.send([]byte("*11\r\n"))
	c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, _ := io.ReadAll(c.rd)
	if want := "-ERR Protocol error: unauthenticated multibulk length\r\n"; string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestTLSHandshakeDoesNotBlock: peers that connect to the TLS port and
// send nothing, or send plaintext RESP, hold no one up and are dropped;
// they never show in CLIENT LIST.
func TestTLSHandshakeDoesNotBlock(t *testing.T) {
	fx := newTLSFixture(t)
	s := startTLSServer(t, Config{TLSHandshakeTimeout: 300 * time.Millisecond}, fx, false)
	var silent []net.Conn
	for range 5 {
		nc, err := net.DialTimeout("tcp", s.TLSAddr().String(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		silent = append(silent, nc)
	}
	plain, err := net.DialTimeout("tcp", s.TLSAddr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if _, err := plain.Write(encode("PING")); err != nil {
		t.Fatal(err)
	}
	// Meanwhile a TLS client is served at once.
	c := dialTLS(t, s, fx.client)
	if got := c.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING = %q", got)
	}
	if got := c.do("CLIENT", "LIST"); strings.Count(got, "id=") != 1 {
		t.Errorf("CLIENT LIST shows more than this client: %q", got)
	}
	// The plaintext peer and the silent ones are dropped: reads end.
	for i, nc := range append(silent, plain) {
		nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		b, err := io.ReadAll(nc)
		if err != nil {
			t.Errorf("peer %d: not dropped: %v", i, err)
		}
		if strings.Contains(string(b), "PONG") {
			t.Errorf("peer %d: a plaintext PING was answered: %q", i, b)
		}
	}
}

// TestTLSCloseNeverHangs: Close returns promptly with handshakes pending,
// for a server that never served, and right after Serve.
func TestTLSCloseNeverHangs(t *testing.T) {
	fx := newTLSFixture(t)
	cfg := Config{Addr: "127.0.0.1:0", TLSAddr: "127.0.0.1:0", TLS: fx.server.ServerConfig(tls.NoClientCert),
		TLSHandshakeTimeout: time.Hour}

	t.Run("pending handshakes", func(t *testing.T) {
		s := NewServer(cfg, newFakeBackend())
		if err := s.Listen(); err != nil {
			t.Fatal(err)
		}
		s.Serve()
		c := dialTLS(t, s, fx.client)
		if got := c.do("PING"); got != "+PONG\r\n" {
			t.Fatalf("PING = %q", got)
		}
		nc, err := net.DialTimeout("tcp", s.TLSAddr().String(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		closeWithin(t, s, 10*time.Second)
		nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.ReadAll(nc); err != nil {
			t.Errorf("the handshaking peer was not dropped: %v", err)
		}
	})
	t.Run("never served", func(t *testing.T) {
		closeWithin(t, NewServer(cfg, newFakeBackend()), 10*time.Second)
		s := NewServer(cfg, newFakeBackend())
		if err := s.Listen(); err != nil {
			t.Fatal(err)
		}
		closeWithin(t, s, 10*time.Second)
		s.Serve() // after Close: serves nothing
		closeWithin(t, s, 10*time.Second)
	})
	t.Run("closed right after Serve", func(t *testing.T) {
		for range 50 {
			s := NewServer(cfg, newFakeBackend())
			if err := s.Listen(); err != nil {
				t.Fatal(err)
			}
			s.Serve()
			closeWithin(t, s, 10*time.Second)
		}
	})
}

// TestListenFailureClosesListeners: when the TLS address cannot be bound,
// the TCP listener opened before is closed, and Close returns.
func TestListenFailureClosesListeners(t *testing.T) {
	fx := newTLSFixture(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	freeAddr := free.Addr().String()
	free.Close()
	s := NewServer(Config{Addr: freeAddr, TLSAddr: busy.Addr().String(), TLS: fx.server.ServerConfig(tls.NoClientCert)}, newFakeBackend())
	if err := s.Listen(); err == nil {
		t.Fatal("Listen on a busy TLS address succeeded")
	}
	ln, err := net.Listen("tcp", freeAddr)
	if err != nil {
		t.Fatalf("the TCP address stayed bound after Listen failed: %v", err)
	}
	ln.Close()
	closeWithin(t, s, 10*time.Second)

	for _, cfg := range []Config{{}, {TLSAddr: "127.0.0.1:0"}} {
		if err := NewServer(cfg, newFakeBackend()).Listen(); err == nil {
			t.Errorf("Listen with %+v succeeded", cfg)
		}
	}
}

// TestTLSReload: after the certificate files change and the Reloader
// reloads, new connections get the new certificate while one made before
// keeps working.
func TestTLSReload(t *testing.T) {
	fx := newTLSFixture(t)
	s := startTLSServer(t, Config{}, fx, true)
	before := dialTLS(t, s, fx.client)
	if got := before.do("PING"); got != "+PONG\r\n" {
		t.Fatal(got)
	}
	ca, err := tlsconf.LoadCA(fx.files["server"].CA, filepath.Join(fx.dir, "ca.key"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := ca.Issue(tlsconf.LeafSpec{Name: "server", Hosts: []string{"localhost"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.WriteFiles(fx.files["server"].Cert, fx.files["server"].Key); err != nil {
		t.Fatal(err)
	}
	if err := fx.server.Reload(); err != nil {
		t.Fatal(err)
	}
	after := dialTLS(t, s, fx.client)
	serial := after.c.(*tls.Conn).ConnectionState().PeerCertificates[0].SerialNumber
	if serial.Cmp(l.Cert.SerialNumber) != 0 {
		t.Fatalf("served serial %x, want the new certificate's %x", serial, l.Cert.SerialNumber)
	}
	for _, c := range []*conn{before, after} {
		if got := c.do("ECHO", "still here"); got != "$10\r\nstill here\r\n" {
			t.Errorf("ECHO = %q", got)
		}
	}
}
