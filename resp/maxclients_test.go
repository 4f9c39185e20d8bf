package resp

import (
	"crypto/tls"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
)

// refused dials s and expects Redis's maxclients error, then the close.
func refused(t *testing.T, addr string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("reading the refusal: %v (got %q)", err, got)
	}
	if string(got) != "-ERR max number of clients reached\r\n" {
		t.Fatalf("a connection past maxclients read %q", got)
	}
}

// infoField returns one field of INFO's output.
func infoField(t *testing.T, c *conn, section, field string) string {
	t.Helper()
	v, ok := testutil.ParseInfo(c.do("INFO", section))[field]
	if !ok {
		t.Fatalf("INFO %s has no %s", section, field)
	}
	return v
}

func TestMaxClients(t *testing.T) {
	s, _ := startServer(t, Config{MaxClients: 3})
	addr := s.Addr().String()
	var held []*conn
	for range 3 {
		c := dial(t, s)
		if got := c.do("PING"); got != "+PONG\r\n" {
			t.Fatalf("PING = %q", got)
		}
		held = append(held, c)
	}
	refused(t, addr)
	refused(t, addr)
	run(t, held[0], []exchange{
		{[]string{"CONFIG", "GET", "maxclients"}, "*2\r\n$10\r\nmaxclients\r\n$1\r\n3\r\n"},
	})
	if got := infoField(t, held[0], "stats", "rejected_connections"); got != "2" {
		t.Fatalf("rejected_connections = %s, want 2", got)
	}
	if got := infoField(t, held[0], "clients", "maxclients"); got != "3" {
		t.Fatalf("INFO maxclients = %s, want 3", got)
	}

	// A client that leaves makes room for one more.
	held[2].c.Close()
	c := dial(t, s)
	deadline := time.Now().Add(10 * time.Second)
	for {
		// The close is noticed asynchronously: a dial just after it may
		// still be refused.
		c.send(encode("PING"))
		c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
		line, err := c.rd.ReadString('\n')
		if err == nil && line == "+PONG\r\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no room after a client left: %q %v", line, err)
		}
		c.c.Close()
		time.Sleep(10 * time.Millisecond)
		c = dial(t, s)
	}
	held[2] = c

	// Lowering keeps the clients connected; raising lets more in.
	run(t, held[0], []exchange{
		{[]string{"CONFIG", "SET", "maxclients", "1"}, "+OK\r\n"},
		{[]string{"PING"}, "+PONG\r\n"},
		{[]string{"CONFIG", "SET", "maxclients", "0"}, "-ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument must be between 1 and 4294967295 inclusive\r\n"},
		{[]string{"CONFIG", "SET", "maxclients", "x"}, "-ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument couldn't be parsed into an integer\r\n"},
	})
	if got := held[1].do("PING"); got != "+PONG\r\n" {
		t.Fatalf("a client connected before maxclients was lowered: PING = %q", got)
	}
	refused(t, addr)
	run(t, held[0], []exchange{
		{[]string{"CONFIG", "SET", "maxclients", "4"}, "+OK\r\n"},
	})
	if got := dial(t, s).do("PING"); got != "+PONG\r\n" {
		t.Fatalf("after raising maxclients: PING = %q", got)
	}
}

// TestMaxClientsTLS: a TLS connection counts from its accept, handshake
// or not, and one past the limit is closed without a handshake.
func TestMaxClientsTLS(t *testing.T) {
	fx := newTLSFixture(t)
	s := startTLSServer(t, Config{MaxClients: 2}, fx, false)
	// A peer that never handshakes holds its place.
	idle, err := net.Dial("tcp", s.TLSAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	c := dialTLS(t, s, fx.client)
	if got := c.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING = %q", got)
	}
	refused(t, s.Addr().String())
	tc, err := net.Dial("tcp", s.TLSAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	cli := tls.Client(tc, fx.client)
	cli.SetDeadline(time.Now().Add(5 * time.Second))
	if err := cli.Handshake(); err == nil {
		t.Fatal("a TLS connection past maxclients completed its handshake")
	}
}

// TestMaxClientsFitsFileLimit: maxclients is lowered at start to what the
// open-files limit holds beside the reserve, and CONFIG SET refuses more,
// naming what fits, with Redis's text.
func TestMaxClientsFitsFileLimit(t *testing.T) {
	lim, err := raiseFileLimit(0)
	if err != nil {
		t.Skip(err)
	}
	fits := int64(lim) - fdReserve
	if fits < 1 {
		t.Skipf("the open files limit %d leaves no client", lim)
	}
	// More than the hard limit allows (unless the test has privilege).
	want := int64(nrOpen()) + 1
	if want <= 1 {
		want = 1 << 40
	}
	s, _ := startServer(t, Config{MaxClients: want})
	fit := s.MaxClients()
	if fit >= want || fit < fits {
		t.Fatalf("maxclients %d at start: want %d lowered to at least %d", fit, want, fits)
	}
	c := dial(t, s)
	got := c.do("CONFIG", "SET", "maxclients", strconv.Itoa(int(want)))
	prefix := "-ERR CONFIG SET failed (possibly related to argument 'maxclients') - The operating system is not able to handle the specified number of clients, try with "
	if !strings.HasPrefix(got, prefix) {
		t.Fatalf("CONFIG SET maxclients %d = %q", want, got)
	}
	if s.MaxClients() != fit {
		t.Fatalf("a refused CONFIG SET changed maxclients from %d to %d", fit, s.MaxClients())
	}
}
