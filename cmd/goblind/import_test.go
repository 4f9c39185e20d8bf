package main

import "testing"

func TestRedisSource(t *testing.T) {
	for _, c := range []struct {
		url, addr, user, pass string
		db                    int
		tls, bad              bool
	}{
		{url: "redis://10.0.0.5:6380", addr: "10.0.0.5:6380"},
		{url: "redis://localhost", addr: "localhost:6379"},
		{url: "redis://:secret@h:1/3", addr: "h:1", pass: "secret", db: 3},
		{url: "redis://secret@h:1", addr: "h:1", pass: "secret"},
		{url: "redis://alice:pw@h:1/0", addr: "h:1", user: "alice", pass: "pw"},
		{url: "rediss://[::1]:6390", addr: "[::1]:6390", tls: true},
		{url: "http://h:1", bad: true},
		{url: "redis://h:1/x", bad: true},
		{url: "h:1", bad: true},
	} {
		addr, user, pass, db, tlsConfig, err := redisSource(c.url)
		if c.bad {
			if err == nil {
				t.Errorf("%s: accepted", c.url)
			}
			continue
		}
		if err != nil || addr != c.addr || user != c.user || pass != c.pass || db != c.db || (tlsConfig != nil) != c.tls {
			t.Errorf("%s: %q %q %q %d tls=%v %v", c.url, addr, user, pass, db, tlsConfig != nil, err)
		}
	}
}
