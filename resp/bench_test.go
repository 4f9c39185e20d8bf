package resp

import (
	"bufio"
	"bytes"
	"net"
	"testing"
	"time"

	"github.com/goblindb/goblin/resp/wire"
)

// BenchmarkPipelined measures the client command path: pipelines of 100
// reads (ZSCORE) or writes (ZADD) over a loopback connection to a server
// on the fake backend, as the default user (every permission: one branch)
// and as a user restricted to some commands and key patterns (a bitmap
// test and a pattern match per command). ns/op is per command.
func BenchmarkPipelined(b *testing.B) {
	for _, user := range []string{"default", "restricted"} {
		for _, kind := range []string{"read", "write"} {
			b.Run(user+"/"+kind, func(b *testing.B) { benchPipelined(b, user, kind) })
		}
	}
}

func benchPipelined(b *testing.B, user, kind string) {
	fb := newFakeBackend()
	s := NewServer(Config{Addr: "127.0.0.1:0"}, fb)
	if err := s.Listen(); err != nil {
		b.Fatal(err)
	}
	s.Serve()
	defer s.Close()
	nc, err := net.DialTimeout("tcp", s.Addr().String(), 5*time.Second)
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	rd := bufio.NewReader(nc)
	do := func(argv ...string) string {
		nc.Write(encode(argv...))
		var out bytes.Buffer
		if err := wire.CopyReply(rd, &out); err != nil {
			b.Fatal(err)
		}
		return out.String()
	}
	do("ZADD", "k:1", "1", "m")
	if user == "restricted" {
		if got := do("ACL", "SETUSER", "u", "on", "nopass", "+@sortedset", "-zrangestore", "~k:*", "~j:*"); got != "+OK\r\n" {
			b.Skipf("ACL SETUSER: %q", got)
		}
		do("AUTH", "u", "x")
	}
	var pipe bytes.Buffer
	for i := 0; i < 100; i++ {
		if kind == "read" {
			pipe.Write(encode("ZSCORE", "k:1", "m"))
		} else {
			pipe.Write(encode("ZADD", "k:1", "1", "m"))
		}
	}
	var out bytes.Buffer
	b.ResetTimer()
	for i := 0; i < b.N; i += 100 {
		nc.Write(pipe.Bytes())
		for j := 0; j < 100; j++ {
			out.Reset()
			if err := wire.CopyReply(rd, &out); err != nil {
				b.Fatal(err)
			}
		}
	}
}
