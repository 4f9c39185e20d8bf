package e2e

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/goblindb/goblin/rdb"
)

// DUMP and RESTORE in the differential test. The reference is Redis 7.0,
// whose DUMP payloads carry RDB version 10 and write listpack scores as
// "%.17g": DUMP replies are compared by the members and scores they
// decode to (normalizeDump). RESTORE sends payloads made by package rdb
// with 7.0's score text, stamped with version 10 so that 7.0 takes them, sometimes spoilt (a
// flipped byte, an unknown type, an empty or NaN set), with random
// options. A bad TTL or payload is sent to a key that never exists: when
// the key exists and REPLACE is not given, Redis answers BUSYKEY first,
// where Goblin has answered from the TTL or payload before reaching the
// keyspace (a documented difference).

func genDump(g *gen, _ int) []string { return []string{"DUMP", g.key()} }

func genRestore(g *gen, _ int) []string {
	k := g.key()
	set := &rdb.Members{}
	n := 1 + g.n(8)
	if g.p(0.05) {
		n = 129 + g.n(40) // beyond a listpack
	}
	seen := map[string]bool{}
	for i := 0; i < n; i++ {
		m := g.member(k)
		if g.p(0.5) || n > 16 {
			m += strconv.Itoa(i)
		}
		if seen[m] {
			continue
		}
		seen[m] = true
		s := 0.0
		if k[0] != 'l' {
			v, err := strconv.ParseFloat(g.pick(goodScore), 64)
			if err != nil {
				continue
			}
			s = v
		}
		set.Member = append(set.Member, []byte(m))
		set.Score = append(set.Score, s)
	}
	payload := restamp(rdb.AppendPayload(nil, set, format70), 10)
	// A set left empty (every score drawn failed to parse) is a bad
	// payload too: both answer Bad data format for it.
	bad := len(set.Member) == 0
	switch x := g.n(40); {
	case x == 0:
		payload[g.n(len(payload))] ^= byte(1 + g.n(255))
		bad = true
	case x == 1:
		payload = restamp(append([]byte{8, 0}, make([]byte, 10)...), 10) // unknown type
		bad = true
	case x == 2:
		payload = restamp(append([]byte{5, 0}, make([]byte, 10)...), 10) // empty
		bad = true
	case x == 3:
		body := append([]byte{5, 1, 1, 'a'}, binary.LittleEndian.AppendUint64(nil, math.Float64bits(math.NaN()))...)
		payload = restamp(append(body, make([]byte, 10)...), 10)
		bad = true
	case x == 4:
		payload = payload[:g.n(12)]
		bad = true
	}
	ttl := "0"
	switch x := g.n(10); {
	case x == 0:
		ttl = strconv.Itoa(1000 + g.n(100000))
	case x == 1:
		ttl = g.pick(badInt)
		bad = true
	case x == 2:
		ttl = "-" + strconv.Itoa(1+g.n(5))
		bad = true
	}
	if bad {
		k = "never:restored"
	}
	argv := []string{"RESTORE", k, ttl, string(payload)}
	if g.p(0.5) {
		argv = append(argv, "REPLACE")
	}
	if g.p(0.1) {
		argv = append(argv, "IDLETIME", g.smallInt())
	} else if g.p(0.1) {
		argv = append(argv, "FREQ", g.pick([]string{"0", "255", "256", "-1", "x"}))
	}
	if g.p(0.05) {
		argv = append(argv, g.pick([]string{"ABSTTL", "FOO", "IDLETIME", "FREQ"}))
	}
	return argv
}

// format70 writes a listpack's non-integer score as Redis 7.0 does
// ("%.17g"): ZSCAN of a listpack replies the stored text as it is.
func format70(dst []byte, f float64) []byte {
	if math.IsInf(f, 0) {
		return rdb.FormatScore(dst, f)
	}
	return strconv.AppendFloat(dst, f, 'g', 17, 64)
}

// normalizeDump replaces a DUMP payload by the sorted members and scores
// it holds (a zero score unsigned: a 7.2 listpack stores -0 as 0).
func normalizeDump(v *value) {
	if v.typ != '$' || v.null {
		return
	}
	p := []byte(v.str)
	if rdb.VerifyPayload(p) != nil {
		v.str = "<bad payload>"
		return
	}
	var ents []string
	_, err := rdb.DecodeZSet(p, func(m []byte, s float64) error {
		if s == 0 {
			s = 0
		}
		ents = append(ents, fmt.Sprintf("%q=%016x", m, math.Float64bits(s)))
		return nil
	})
	if err != nil {
		v.str = "<undecodable payload: " + err.Error() + ">"
		return
	}
	sort.Strings(ents)
	v.str = strings.Join(ents, " ")
}
