package command

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestZScanBigSet pages through a set bigger than the one-reply limit by
// rank and checks every member comes exactly once, scores as "%.17g".
func TestZScanBigSet(t *testing.T) {
	for _, proto := range []int{2, 3} {
		f := newFixture(proto)
		f.do72("ZADD", "big", "0.1", "m000")
		for i := 1; i < 300; i++ {
			f.do("ZADD", "big", strconv.Itoa(i), fmt.Sprintf("m%03d", i))
		}
		seen := map[string]string{}
		cursor, calls := "0", 0
		for {
			r := f.do("ZSCAN", "big", cursor, "COUNT", "7")
			calls++
			// *2 $<n> cursor *<k> then k bulk strings.
			parts := strings.Split(r, "\r\n")
			cursor = parts[2]
			n, _ := strconv.Atoi(parts[3][1:])
			if n > 14 {
				t.Fatalf("RESP%d: %d elements for COUNT 7", proto, n)
			}
			for i := 0; i < n; i += 2 {
				m, s := parts[5+2*i], parts[7+2*i]
				if _, dup := seen[m]; dup {
					t.Fatalf("RESP%d: %s returned twice", proto, m)
				}
				seen[m] = s
			}
			if cursor == "0" {
				break
			}
		}
		if len(seen) != 300 || calls != 43 {
			t.Errorf("RESP%d: %d members in %d calls, want 300 in 43", proto, len(seen), calls)
		}
		if seen["m000"] != "0.10000000000000001" || seen["m007"] != "7" {
			t.Errorf("RESP%d: scores %q %q, want %%.17g", proto, seen["m000"], seen["m007"])
		}
		// A small set comes whole, whatever COUNT says, scores as replies.
		f.do("ZADD", "small", "0.1", "a", "2", "b", "3", "c")
		want := "*2\r\n$1\r\n0\r\n*6\r\n$1\r\na\r\n$3\r\n0.1\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n"
		if got := f.do72("ZSCAN", "small", "0", "COUNT", "1"); got != want {
			t.Errorf("RESP%d small ZSCAN: %q, want %q", proto, got, want)
		}
		// MATCH filters after COUNT selects: pages may come back empty.
		if got := f.do("ZSCAN", "big", "0", "MATCH", "m29*", "COUNT", "10"); got != "*2\r\n$2\r\n10\r\n*0\r\n" {
			t.Errorf("RESP%d ZSCAN MATCH first page: %q", proto, got)
		}
		if got := f.do("ZSCAN", "big", "300"); got != "*2\r\n$1\r\n0\r\n*0\r\n" {
			t.Errorf("RESP%d ZSCAN past the end: %q", proto, got)
		}
	}
}

// TestScanVisitsEveryKeyOnce scans a database in small pages while keys
// are added and removed: every key present throughout comes exactly once.
func TestScanVisitsEveryKeyOnce(t *testing.T) {
	f := newFixture(2)
	for i := 0; i < 500; i++ {
		f.do("ZADD", "k"+strconv.Itoa(i), "1", "m")
	}
	seen := map[string]int{}
	cursor := "0"
	for round := 0; ; round++ {
		r := f.do("SCAN", cursor, "COUNT", "9")
		parts := strings.Split(r, "\r\n")
		cursor = parts[2]
		n, _ := strconv.Atoi(parts[3][1:])
		for i := 0; i < n; i++ {
			seen[parts[5+2*i]]++
		}
		// Churn: keys k500 and up come and go during the scan.
		f.do("ZADD", "k"+strconv.Itoa(500+round), "1", "m")
		f.do("DEL", "k"+strconv.Itoa(500+round/2))
		if cursor == "0" {
			break
		}
	}
	for i := 0; i < 500; i++ {
		if c := seen["k"+strconv.Itoa(i)]; c != 1 {
			t.Errorf("k%d returned %d times", i, c)
		}
	}
	for k, c := range seen {
		if c != 1 {
			t.Errorf("%s returned %d times", k, c)
		}
	}
}
