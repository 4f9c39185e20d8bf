package resp

import (
	"crypto/tls"
	"net"
	"strings"
	"testing"

	"github.com/goblindb/goblin/resp/wire"
)

// socketFD finds the descriptor under a TLS session over a RawSocket,
// and CLIENT LIST shows a TLS client's.
func TestSocketFDThroughTLS(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if fd := socketFD(tls.Server(wire.NewRawSocket(c), &tls.Config{})); fd < 0 {
		t.Fatalf("socketFD through TLS: %d", fd)
	}

	fx := newTLSFixture(t)
	s := startTLSServer(t, Config{}, fx, false)
	cl := dialTLS(t, s, fx.client)
	list := cl.do("CLIENT", "LIST")
	if !strings.Contains(list, " fd=") || strings.Contains(list, " fd=-1 ") {
		t.Fatalf("CLIENT LIST over TLS: %q", list)
	}
}
