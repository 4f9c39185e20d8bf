package resp

import (
	"bufio"
	"fmt"
	"net"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// CLIENT LIST reads the fields other connections change while they
// change them: under the race detector, a client changing its name,
// library, database, protocol, READONLY and transaction while another
// lists the clients shows no data race, and every line it lists is whole.
func TestClientListWhileClientsChange(t *testing.T) {
	s, _ := startServer(t, Config{})
	a, b := dial(t, s), dial(t, s)
	const rounds = 200
	done := make(chan struct{})
	go func() {
		defer close(done)
		var batch []byte
		for i := 0; i < rounds; i++ {
			name := []string{"x", strings.Repeat("y", 40)}[i%2]
			for _, argv := range [][]string{
				{"CLIENT", "SETNAME", name}, {"CLIENT", "SETINFO", "LIB-NAME", name}, {"SELECT", fmt.Sprint(i % 16)},
				{"READONLY"}, {"MULTI"}, {"PING"}, {"DISCARD"}, {"READWRITE"}, {"HELLO", "3"}, {"HELLO", "2"}, {"RESET"},
			} {
				batch = append(batch, encode(argv...)...)
			}
			a.send(batch)
			batch = batch[:0]
		}
	}()
	line := regexp.MustCompile(`^id=\d+ addr=\S+ laddr=\S+ fd=-?\d+ name=(x|y{40})? age=\d+ idle=\d+ flags=[NxOrbU]+ db=\d+ .* resp=[23] lib-name=(x|y{40})? lib-ver=\S*$`)
	for i := 0; i < rounds; i++ {
		for _, l := range strings.Split(strings.TrimSpace(bulkText(b.do("CLIENT", "LIST"))), "\n") {
			if !line.MatchString(l) {
				t.Fatalf("CLIENT LIST line %q", l)
			}
		}
	}
	<-done
}

// CLIENT LIST's flags: Redis's letters, in Redis's order (x, b, U, r).
func TestClientListFlags(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "g.sock")
	s, _ := startServer(t, Config{UnixSocket: sock})
	list := dial(t, s)
	flagsOf := func(id string) string {
		t.Helper()
		for _, l := range strings.Split(bulkText(list.do("CLIENT", "LIST", "ID", id)), "\n") {
			if m := regexp.MustCompile(` flags=(\S+) `).FindStringSubmatch(l); m != nil {
				return m[1]
			}
		}
		t.Fatalf("client %s not listed", id)
		return ""
	}
	idOf := func(c *conn) string { return strings.Trim(c.do("CLIENT", "ID"), ":\r\n") }

	tcp := dial(t, s)
	tcpID := idOf(tcp)
	if f := flagsOf(tcpID); f != "N" {
		t.Fatalf("a plain connection's flags: %q", f)
	}
	tcp.do("READONLY")
	tcp.do("MULTI")
	if f := flagsOf(tcpID); f != "xr" {
		t.Fatalf("flags in a transaction, READONLY: %q, want xr", f)
	}
	nc, err := net.DialTimeout("unix", sock, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	unix := &conn{t: t, c: nc, rd: bufio.NewReader(nc)}
	id := idOf(unix)
	unix.send(encode("BZPOPMIN", "nothing", "0"))
	want := "bU"
	for deadline := time.Now().Add(10 * time.Second); flagsOf(id) != want; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("a blocked Unix socket client's flags: %q, want %q", flagsOf(id), want)
		}
	}
}

// bulkText is a bulk string reply's text.
func bulkText(reply string) string {
	_, text, _ := strings.Cut(reply, "\r\n")
	return strings.TrimSuffix(text, "\r\n")
}
