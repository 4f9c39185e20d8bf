package command

import (
	"math"
	"strings"
	"testing"
)

// Replies that only Redis 7.2 can be compared with (the local reference
// server is 7.0): ZRANK/ZREVRANK WITHSCORE, 7.2's double format, the
// timeout range check; and Goblin's own answers where it deliberately
// differs (OBJECT ENCODING, the sign of a zero score). Expected bytes are
// Redis 7.2's, from its source and documentation.

type exchange72 struct {
	argv         string // split on spaces
	resp2, resp3 string // "" in resp3: same as resp2
}

func run72(t *testing.T, script []exchange72) {
	t.Helper()
	for _, proto := range []int{2, 3} {
		f := newFixture(proto)
		for i, x := range script {
			want := x.resp2
			if proto == 3 && x.resp3 != "" {
				want = x.resp3
			}
			got := f.do72(strings.Fields(x.argv)...)
			if got != want {
				t.Errorf("RESP%d step %d %q:\n got %q\nwant %q", proto, i, x.argv, got, want)
			}
		}
	}
}

// do72 is fixture.do with Redis 7.2's double format.
func (f *fixture) do72(argv ...string) string {
	saved := fixtureFormat
	fixtureFormat = Double72
	defer func() { fixtureFormat = saved }()
	return f.do(argv...)
}

func TestZRankWithScore(t *testing.T) {
	run72(t, []exchange72{
		{"ZADD z 1.5 a 2 b 3 c", ":3\r\n", ""},
		{"ZRANK z b WITHSCORE", "*2\r\n:1\r\n$1\r\n2\r\n", "*2\r\n:1\r\n,2\r\n"},
		{"ZREVRANK z a withscore", "*2\r\n:2\r\n$3\r\n1.5\r\n", "*2\r\n:2\r\n,1.5\r\n"},
		{"ZRANK z nope WITHSCORE", "*-1\r\n", "_\r\n"},
		{"ZRANK nokey a WITHSCORE", "*-1\r\n", "_\r\n"},
		{"ZRANK nokey a", "$-1\r\n", "_\r\n"},
		{"ZRANK z a WITHSCORES", "-ERR syntax error\r\n", ""},
		{"ZRANK z a WITHSCORE x", "-ERR wrong number of arguments for 'zrank' command\r\n", ""},
		{"ZREVRANK z a WITHSCORE x", "-ERR wrong number of arguments for 'zrevrank' command\r\n", ""},
	})
}

func TestDoubles72(t *testing.T) {
	run72(t, []exchange72{
		{"ZADD d 0.1 a 1.5e-7 b 1e21 c 123456789.123 d 3.0 e 1e16 f 1e17 g 2.5e-5 h", ":8\r\n", ""},
		{"ZSCORE d a", "$3\r\n0.1\r\n", ",0.1\r\n"},
		{"ZSCORE d b", "$6\r\n1.5e-7\r\n", ",1.5e-7\r\n"},
		{"ZSCORE d c", "$5\r\n1e+21\r\n", ",1e+21\r\n"},
		{"ZSCORE d d", "$13\r\n123456789.123\r\n", ",123456789.123\r\n"},
		{"ZSCORE d e", "$1\r\n3\r\n", ",3\r\n"},
		{"ZSCORE d f", "$17\r\n10000000000000000\r\n", ",10000000000000000\r\n"},
		{"ZSCORE d g", "$18\r\n100000000000000000\r\n", ",100000000000000000\r\n"},
		{"ZSCORE d h", "$8\r\n0.000025\r\n", ",0.000025\r\n"},
		{"ZINCRBY d 0.2 a", "$19\r\n0.30000000000000004\r\n", ",0.30000000000000004\r\n"},
		{"ZADD d INCR inf a", "$3\r\ninf\r\n", ",inf\r\n"},
		{"ZADD d -0 z", ":1\r\n", ""},
		// Goblin keeps a zero score's sign; Redis 7.2 loses it in a
		// listpack (small sets) and keeps it in a skiplist.
		{"ZSCORE d z", "$2\r\n-0\r\n", ",-0\r\n"},
	})
}

// Digits where Grisu2, and so Redis 7.2, is not the shortest round trip;
// confirmed with fpconv_dtoa compiled from Redis 7.2.5 (grisu_oracle_test.go).
func TestGrisuNotShortest(t *testing.T) {
	for bits, want := range map[uint64]string{
		0x43153826e9584b6d: "1493178571428571.3",
		0x40b96d6666666667: "6509.4000000000005",
		0x3db42b0dffc4234d: "1.8342855000000002e-11",
		0x390a8e6ac41ecb85: "6.3932006742038274e-34",
		0x3d29a590e0763afa: "4.5557765372793363e-14",
		0x4319cd2075a6e493: "1815603428571428.7",
		0x3ff0000000000000: "1",
		0x0000000000000001: "5e-324",
		0x7fefffffffffffff: "1.7976931348623157e+308",
	} {
		f := math.Float64frombits(bits)
		if got := string(appendDouble(nil, f, Double72)); got != want {
			t.Errorf("%x (%v): got %q, want %q", bits, f, got, want)
		}
		if got := string(appendDouble(nil, -f, Double72)); got != "-"+want {
			t.Errorf("-%x: got %q, want %q", bits, got, "-"+want)
		}
	}
}

func TestTimeouts72(t *testing.T) {
	run72(t, []exchange72{
		// 7.2 checks that the deadline fits; 7.0 answered "negative".
		{"BZPOPMIN k 1e400", "-ERR timeout is out of range\r\n", ""},
		{"BZPOPMIN k inf", "-ERR timeout is out of range\r\n", ""},
		{"BZMPOP 9223372036854775.807 1 k MIN", "-ERR timeout is out of range\r\n", ""},
		{"BZPOPMIN k -inf", "-ERR timeout is negative\r\n", ""},
		{"BZPOPMIN k 1e-5000", "-ERR timeout is not a float or out of range\r\n", ""},
		// A long double's huge range: not a float for a double, fine here.
		{"BZPOPMIN k 1e-400", "*-1\r\n", "_\r\n"},
	})
	for _, c := range []struct {
		in   string
		want int64
		err  string
	}{
		{"0", 0, ""},
		{"0.001", 1, ""},
		{"0.0001", 1, ""},
		{"1.5", 1500, ""},
		{"0x10", 16000, ""},
		{"-0.0001", 0, ""}, // rounds up to -0 ms: wait forever, as Redis does
		{"-0.001", 0, ""},  // the long double nearest -0.001 times 1000 is above -1
		{"-0.002", 0, "ERR timeout is negative"},
		{"-1", 0, "ERR timeout is negative"},
		{" 1", 0, "ERR timeout is not a float or out of range"},
		{"1 ", 0, "ERR timeout is not a float or out of range"},
		{"nan", 0, "ERR timeout is not a float or out of range"},
		{"", 0, "ERR timeout is not a float or out of range"},
		{"1e3", 1000000, ""},
		{"9223372036854775.807", 0, "ERR timeout is out of range"},
	} {
		got, err := ParseTimeout([]byte(c.in), 1_700_000_000_000)
		errText := ""
		if err != nil {
			errText = err.Error()
		}
		if got != c.want || errText != c.err {
			t.Errorf("ParseTimeout(%q) = %d, %q; want %d, %q", c.in, got, errText, c.want, c.err)
		}
	}
}

func TestGoblinOwnReplies(t *testing.T) {
	run72(t, []exchange72{
		{"ZADD z 1 a", ":1\r\n", ""},
		{"OBJECT ENCODING z", "$8\r\nstandard\r\n", ""},
		{"OBJECT IDLETIME z", ":0\r\n", ""},
		{"OBJECT REFCOUNT z", ":1\r\n", ""},
		{"MEMORY HELP", "*6\r\n+MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+USAGE <key> [SAMPLES <count>]\r\n" +
			"+    Return memory in bytes used by <key> and its value. Nested values are\r\n" +
			"+    sampled up to <count> times (default: 5, 0 means sample all).\r\n+HELP\r\n+    Print this help.\r\n", ""},
		{"MEMORY STATS", "-ERR unknown subcommand 'STATS'. Try MEMORY HELP.\r\n", ""},
		{"memory foo", "-ERR unknown subcommand 'foo'. Try MEMORY HELP.\r\n", ""},
		{"LPUSH z", "-ERR unknown command 'LPUSH', with args beginning with: 'z' \r\n", ""},
	})
	f := newFixture(2)
	f.do("ZADD", "z", "1", "a")
	if got := f.do("MEMORY", "USAGE", "z"); !strings.HasPrefix(got, ":") || got == ":0\r\n" {
		t.Errorf("MEMORY USAGE z = %q, want a positive integer", got)
	}
}

// Scores whose hex form underflows to zero are refused, as glibc's strtod
// reports ERANGE for them; ZADD's flags in ZINCRBY's increment are a
// syntax error, as Redis parses ZINCRBY as ZADD INCR.
func TestScoreAndFlagEdges72(t *testing.T) {
	run72(t, []exchange72{
		{"ZADD s 0x1p-1075 m", "-ERR value is not a valid float\r\n", ""},
		{"ZADD s 0x0p-1075 m", ":1\r\n", ""},
		{"ZADD s 0x1p-1074 m2", ":1\r\n", ""},
		{"ZINCRBY s 0x1p-1075 m", "-ERR value is not a valid float\r\n", ""},
		{"ZUNION 1 s WEIGHTS 0x1p-1075", "-ERR weight value is not a float\r\n", ""},
		{"ZINCRBY s nx m", "-ERR syntax error\r\n", ""},
		{"ZINCRBY s Incr m", "-ERR syntax error\r\n", ""},
		{"ZINCRBY s GT m", "-ERR syntax error\r\n", ""},
		{"ZINCRBY s abc m", "-ERR value is not a valid float\r\n", ""},
		// EXPIRETIME rounds the largest time without overflowing.
		{"PEXPIREAT s 9223372036854775807", ":1\r\n", ""},
		{"EXPIRETIME s", ":9223372036854776\r\n", ""},
		{"PEXPIRETIME s", ":9223372036854775807\r\n", ""},
	})
}
