package raftfsm

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// undecodable are entries no build of this format decodes: another
// version, an op this build does not know, a truncated command, trailing
// bytes, nothing at all.
func undecodable() map[string][]byte {
	valid := zadd("k", "x")
	return map[string][]byte{
		"version":   {Version + 1, byte(OpNoop)},
		"op":        {Version, 250},
		"truncated": valid[:len(valid)-1],
		"trailing":  append(bytes.Clone(valid), 0),
		"empty":     {},
		"db":        {Version, byte(OpCommand), 2, 0, 0, 1, 16, 1, 1, 'x'},
	}
}

// An entry that cannot be decoded is recorded as failed: no panic, the
// state unchanged, an error result wrapping ErrEntryFailed for its
// proposer, the counter and an ERROR log line with its index and term;
// the entries around it apply as usual.
func TestUndecodableEntryFails(t *testing.T) {
	for name, bad := range undecodable() {
		t.Run(name, func(t *testing.T) {
			var logBuf bytes.Buffer
			f := New()
			f.Logger = hclog.New(&hclog.LoggerOptions{Output: &logBuf, Level: hclog.Info})
			ref := New() // applies only the good entries
			good := []*raft.Log{
				{Index: 1, Term: 1, Type: raft.LogCommand, Data: zadd("k", "a")},
				{Index: 3, Term: 1, Type: raft.LogCommand, Data: zadd("k", "b")},
			}
			out := f.ApplyBatch([]*raft.Log{good[0], {Index: 2, Term: 7, Type: raft.LogCommand, Data: bad}, good[1]})
			ref.ApplyBatch(good)

			res := out[1].(Result)
			if !errors.Is(res.Err, ErrEntryFailed) || !errors.Is(res.Err, ErrCorrupt) || res.Reply != nil || res.Index != 2 {
				t.Fatalf("result of the bad entry: %+v", res)
			}
			// A client reads "-ERR " and this.
			if msg := res.Err.Error(); !strings.HasPrefix(msg, "log entry failed (index 2): raftfsm: corrupt log entry") {
				t.Fatalf("error text %q", msg)
			}
			for _, i := range []int{0, 2} {
				if r := out[i].(Result); r.Err != nil || string(r.Reply) != ":1\r\n" {
					t.Fatalf("entry %d around the bad one: %+v", i, r)
				}
			}
			if got, want := dump(f.KS()), dump(ref.KS()); got != want {
				t.Fatalf("state after the bad entry:\n%s\nwant\n%s", got, want)
			}
			if f.Failed() != 1 || f.Applied() != 3 {
				t.Fatalf("Failed %d Applied %d, want 1 and 3", f.Failed(), f.Applied())
			}
			line := logBuf.String()
			if !strings.Contains(line, "[ERROR]") || !strings.Contains(line, "index=2") || !strings.Contains(line, "term=7") {
				t.Fatalf("log line %q lacks ERROR, the index or the term", line)
			}
			// Apply, raft's one-log path, records it the same way.
			if r := f.Apply(&raft.Log{Index: 4, Term: 7, Type: raft.LogCommand, Data: bad}).(Result); !errors.Is(r.Err, ErrEntryFailed) {
				t.Fatalf("Apply: %+v", r)
			}
			if f.Failed() != 2 {
				t.Fatalf("Failed %d after a second bad entry", f.Failed())
			}
		})
	}
}

// An FSM without a logger records failed entries too.
func TestUndecodableEntryWithoutLogger(t *testing.T) {
	f := New()
	r := f.Apply(&raft.Log{Index: 1, Type: raft.LogCommand, Data: []byte{Version, 250}}).(Result)
	if !errors.Is(r.Err, ErrEntryFailed) || f.Failed() != 1 {
		t.Fatalf("result %+v, failed %d", r, f.Failed())
	}
}

// The commands a decodable entry holds get the replies Redis gives them,
// whatever they are, and the entry goes on: nothing panics, and nothing
// is half-applied.
func TestApplierAnswersWhatItCannotRun(t *testing.T) {
	f := newFuzzFSM(t)
	steps := []struct {
		e    *Entry
		want string
	}{
		{&Entry{Op: OpBatch, Proto: 2, Time: fuzzEpoch, Commands: []Command{NewCommand(0, "ZCARD"), NewCommand(0, "OBJECT", "nosuch", "k"), NewCommand(0, "ZADD", "k", "x", "a"), NewCommand(0, "ZCARD", "k")}},
			"-ERR wrong number of arguments for 'zcard' command\r\n" +
				"-ERR unknown subcommand 'nosuch'. Try OBJECT HELP.\r\n" +
				"-ERR value is not a valid float\r\n:6\r\n"},
		{&Entry{Op: OpMulti, Proto: 2, Time: fuzzEpoch, Commands: []Command{NewCommand(0, "ZRANDMEMBER", "k", strconv.FormatInt(-math.MaxInt64, 10)), NewCommand(0, "ZCARD", "k")}},
			"*2\r\n-ERR ZRANDMEMBER count is too large inside a transaction\r\n:6\r\n"},
		{&Entry{Op: OpMulti, Proto: 2, Time: fuzzEpoch, Commands: []Command{NewCommand(0, "ZADD", "big", "1", strings.Repeat("m", 1<<20)), NewCommand(0, "ZRANDMEMBER", "big", "-65")}},
			"*2\r\n:1\r\n-ERR ZRANDMEMBER count is too large inside a transaction\r\n"},
		{&Entry{Op: OpCommand, Proto: 3, Time: fuzzEpoch, Commands: []Command{NewCommand(0, "MULTI")}},
			"-ERR unknown command 'MULTI', with args beginning with: \r\n"},
	}
	for i, s := range steps {
		r := f.Apply(&raft.Log{Index: uint64(100 + i), Type: raft.LogCommand, Data: s.e.Encode(nil)}).(Result)
		if r.Err != nil || string(r.Reply) != s.want {
			t.Errorf("step %d: got %q %v, want %q", i, r.Reply, r.Err, s.want)
		}
	}
	checkSets(t, f.KS())
}

// A transaction's reads stop running once its replies pass
// command.MaxAppliedReply, so no entry builds more than a node holds; its
// writes still run.
func TestEntryReplyIsBounded(t *testing.T) {
	f := newFuzzFSM(t)
	member := strings.Repeat("m", 1<<20)
	one := "*1\r\n$1048576\r\n" + member + "\r\n"
	cmds := []Command{NewCommand(0, "ZADD", "big", "1", member)}
	for range 70 {
		cmds = append(cmds, NewCommand(0, "ZRANGE", "big", "0", "-1"))
	}
	cmds = append(cmds, NewCommand(0, "ZADD", "big", "2", "n"), NewCommand(0, "ZCARD", "big"))
	r := f.Apply(&raft.Log{Index: 100, Type: raft.LogCommand, Data: (&Entry{Op: OpMulti, Proto: 2, Time: fuzzEpoch, Commands: cmds}).Encode(nil)}).(Result)
	reply := string(r.Reply)
	// The header, the ZADD, then full ZRANGE replies until the total
	// passes the bound.
	rest, ok := strings.CutPrefix(reply, "*73\r\n:1\r\n")
	full := 0
	for ok {
		if rest, ok = strings.CutPrefix(rest, one); ok {
			full++
		}
	}
	tooLarge := "-ERR reply too large: this transaction's replies passed 64 MiB, its remaining reads are not run\r\n"
	if want := strings.Repeat(tooLarge, 70-full) + ":1\r\n" + tooLarge; full != 64 || rest != want {
		t.Fatalf("%d full ZRANGE replies (want 64), then %.300q", full, rest)
	}
	if z := f.KS().DB(0).Peek([]byte("big")); z == nil || z.Z.Len() != 2 {
		t.Fatal("the transaction's last write did not run")
	}
}
