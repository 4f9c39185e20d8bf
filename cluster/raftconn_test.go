package cluster

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// A connection of Raft's pool whose peer closed it while it sat idle
// (the peer restarted) carries the next request on a new connection,
// over plain TCP and over TLS.
func TestRaftConnReplacesClosedConnection(t *testing.T) {
	for _, tc := range []struct {
		name  string
		creds func(id string) Credentials
	}{
		{"plain", func(string) Credentials { return nil }},
		{"tls", func(id string) Credentials { return mustSecret(t, id, secretOf(7)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			from, to := testPlane(t, "a", tc.creds("a")), testPlane(t, "b", tc.creds("b"))
			accepted := make(chan net.Conn, 4)
			go func() {
				for {
					c, err := raftStream{to}.Accept()
					if err != nil {
						return
					}
					accepted <- c
					go func() { // an echo of lines
						r := bufio.NewReader(c)
						for {
							line, err := r.ReadString('\n')
							if err != nil {
								return
							}
							c.Write([]byte(line))
						}
					}()
				}
			}()
			c, err := raftStream{from}.Dial(raft.ServerAddress(to.adv.String()), 2*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(5 * time.Second))
			r := bufio.NewReader(c)
			ask := func(q string) (string, error) {
				if _, err := c.Write([]byte(q + "\n")); err != nil {
					return "", err
				}
				line, err := r.ReadString('\n')
				return strings.TrimSpace(line), err
			}
			if a, err := ask("one"); a != "one" || err != nil {
				t.Fatalf("first request: %q, %v", a, err)
			}
			(<-accepted).Close() // the peer goes away
			time.Sleep(50 * time.Millisecond)
			if a, err := ask("two"); a != "two" || err != nil {
				t.Fatalf("request after the peer closed: %q, %v", a, err)
			}
			select {
			case <-accepted:
			case <-time.After(time.Second):
				t.Fatal("no new connection was made")
			}
			if a, err := ask("three"); a != "three" || err != nil {
				t.Fatalf("request on the new connection: %q, %v", a, err)
			}
			select {
			case <-accepted:
				t.Fatal("a live connection was replaced")
			case <-time.After(100 * time.Millisecond):
			}
		})
	}
}
