package e2e

import (
	"bytes"
	"strings"
	"testing"

	"github.com/goblindb/goblin/internal/testutil"
)

// TestConfigSetMatchesRedis sets each numeric parameter Goblin keeps as
// Redis does to values a person or a script may write (units in any case,
// signs, leading zeros, numbers past 32 and 64 bits, junk) on
// redis-server and goblind, and compares CONFIG SET's reply and the value
// CONFIG GET reads back, byte for byte. Each parameter goes back to its
// default after each value, so one refused value does not leave the two
// servers apart.
func TestConfigSetMatchesRedis(t *testing.T) {
	rs := testutil.StartRedis(t)
	g := StartGoblind(t, NodeOptions{})
	rc, gc := DialRaw(t, rs.Addr), DialRaw(t, g.Addr)
	params := map[string]string{ // name: default
		"maxmemory": "0", "slowlog-log-slower-than": "10000", "slowlog-max-len": "128",
		"latency-monitor-threshold": "0", "acllog-max-len": "128", "client-query-buffer-limit": "1gb",
		"zset-max-listpack-entries": "128", "zset-max-listpack-value": "64", "zset-max-ziplist-entries": "128",
		"hash-max-listpack-value": "64", "set-max-intset-entries": "512", "list-max-listpack-size": "-2",
	}
	values := []string{"0", "-1", "1", "-0", "01", "+1", " 1", "1 ", "", "abc", "0x10", "1.5mb", "1 mb",
		"1b", "0b", "kb", "1k", "1kb", "1K", "1KB", "1m", "1mb", "1Mb", "1g", "1gb", "1GB", "100mb", "512mb",
		"2147483647", "2147483648", "-2147483649", "4294967296", "9223372036854775807", "9223372036854775808",
		"-9223372036854775808", "-9223372036854775809", "18446744073709551615", "18446744073709551616",
		"99999999999999999999", "99999999999999999999gb", "17179869184gb", strings.Repeat("9", 130),
		"1024gb", "1048575gb", "1048576gb", "1152921504606846975"}
	for name, def := range params {
		for _, v := range values {
			for _, argv := range [][]string{{"CONFIG", "SET", name, v}, {"CONFIG", "GET", name}} {
				want, got := rc.Do(argv...), gc.Do(argv...)
				if !bytes.Equal(want, got) {
					t.Errorf("%q:\nredis:  %q\ngoblin: %q", argv, want, got)
				}
			}
			if name == "maxmemory" {
				// INFO prints it signed, and in Redis's units.
				ri, gi := testutil.ParseInfo(string(rc.Do("INFO", "memory"))), testutil.ParseInfo(string(gc.Do("INFO", "memory")))
				for _, field := range []string{"maxmemory", "maxmemory_human"} {
					if want, got := ri[field], gi[field]; want == "" || want != got {
						t.Errorf("INFO %s after CONFIG SET maxmemory %q: redis %q, goblin %q", field, v, want, got)
					}
				}
			}
			rc.Do("CONFIG", "SET", name, def)
			gc.Do("CONFIG", "SET", name, def)
		}
	}
}
