package wire

import (
	"bufio"
	"bytes"
	"errors"
	"strings"
	"testing"
)

func read(t *testing.T, s string, lim Limits) (Reply, error) {
	t.Helper()
	return ReadReplyWithin(bufio.NewReader(strings.NewReader(s)), lim)
}

func TestReadReply(t *testing.T) {
	r, err := read(t, "*4\r\n+OK\r\n:-7\r\n$3\r\na\r\n\r\n*2\r\n$-1\r\n-ERR no\r\n", DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if r.Kind != '*' || len(r.Array) != 4 || string(r.Array[0].Str) != "OK" || r.Array[1].Num != -7 ||
		string(r.Array[2].Str) != "a\r\n" || !r.Array[3].Array[0].Null || r.Array[3].Array[1].Err().Error() != "ERR no" {
		t.Fatalf("parsed %+v", r)
	}
	if r.Err() != nil {
		t.Fatalf("an array is not an error: %v", r.Err())
	}
}

func TestReadReplyRefusesWhatExceedsTheLimits(t *testing.T) {
	lim := Limits{MaxBulk: 4, MaxArray: 2, MaxDepth: 1}
	for _, in := range []string{
		"$5\r\nhello\r\n",          // bulk over MaxBulk
		"*3\r\n:1\r\n:2\r\n:3\r\n", // array over MaxArray
		"*1\r\n*1\r\n:1\r\n",       // nesting over MaxDepth
		"%1\r\n",                   // RESP3 map: not RESP2
		":12x\r\n",                 // not a number
		"+OK\n",                    // no CR
	} {
		if _, err := read(t, in, lim); !errors.Is(err, ErrMalformed) {
			t.Errorf("%q: %v, want ErrMalformed", in, err)
		}
	}
}

func TestAppendCommand(t *testing.T) {
	want := "*3\r\n$4\r\nZADD\r\n$1\r\nk\r\n$0\r\n\r\n"
	if got := string(AppendCommand(nil, []byte("ZADD"), []byte("k"), nil)); got != want {
		t.Fatalf("AppendCommand: %q", got)
	}
	if got := string(AppendCommandStrings(nil, "ZADD", "k", "")); got != want {
		t.Fatalf("AppendCommandStrings: %q", got)
	}
	r, err := read(t, want, DefaultLimits)
	if err != nil || len(r.Array) != 3 || string(r.Array[0].Str) != "ZADD" {
		t.Fatalf("a request reads back as an array: %+v %v", r, err)
	}
}

func TestCopyReplyKeepsTheBytes(t *testing.T) {
	in := "%2\r\n+a\r\n*2\r\n$1\r\nx\r\n,1.5\r\n=7\r\ntxt:abc\r\n_\r\n" + "+next\r\n"
	br := bufio.NewReader(strings.NewReader(in))
	var out bytes.Buffer
	if err := CopyReply(br, &out); err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSuffix(in, "+next\r\n"); out.String() != want {
		t.Fatalf("copied %q, want %q", out.String(), want)
	}
	out.Reset()
	if err := CopyReply(br, &out); err != nil || out.String() != "+next\r\n" {
		t.Fatalf("next reply: %q %v", out.String(), err)
	}
}

func TestSkipReply(t *testing.T) {
	br := bufio.NewReader(strings.NewReader("*3\r\n:1\r\n-ERR a\r\n$2\r\nhi\r\n%1\r\n+k\r\n_\r\n+after\r\n"))
	if err := SkipReply(br); err == nil || err.Error() != "ERR a" {
		t.Fatalf("array with an error inside: %v, want ERR a", err)
	}
	if err := SkipReply(br); err != nil {
		t.Fatalf("map: %v", err)
	}
	r, err := ReadReply(br)
	if err != nil || string(r.Str) != "after" {
		t.Fatalf("the reply after: %+v %v", r, err)
	}
	sr := strings.NewReader("")
	br = bufio.NewReader(sr)
	if n := testing.AllocsPerRun(100, func() {
		sr.Reset("*2\r\n$2\r\nhi\r\n:5\r\n")
		br.Reset(sr)
		SkipReply(br)
	}); n != 0 {
		t.Fatalf("SkipReply allocates %.0f times per reply", n)
	}
}
