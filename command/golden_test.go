package command

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblindb/goblin/keyspace"
	"github.com/goblindb/goblin/resp/wire"
)

// The golden test runs the command scripts of testdata/scripts.txt against
// the command package and compares every reply, in RESP2 and RESP3, with
// the bytes redis-server sent for the same script, recorded in
// testdata/replies.golden. To record them again (Debian's Redis 7.0, whose
// doubles the fixture writes in 7.0's "%.17g" form):
//
//	go test ./command -run TestGolden -update-golden
//
// Script syntax: a line per command, arguments separated by spaces, each
// argument optionally a Go-quoted string; a blank line starts a new script
// (an empty keyspace); '#' starts a comment line.

var updateGolden = flag.Bool("update-golden", false, "record testdata/replies.golden from a local redis-server")

// fixture runs commands as the state machine and the read path do, with a
// fixed clock: writes are validated, then run with a log index; reads run
// with index 0.
type fixture struct {
	ks    *keyspace.Keyspace
	index uint64
	now   int64
	db    int
	proto int
	rand  *rand.Rand
}

// fixtureFormat is the double format fixtures write: Redis 7.0's, like the
// reference server of the golden file.
var fixtureFormat = Double70

func newFixture(proto int) *fixture {
	return &fixture{ks: keyspace.New(), now: 1_700_000_000_000, proto: proto, rand: rand.New(rand.NewPCG(1, 2))}
}

func (f *fixture) do(argv ...string) string {
	args := make([][]byte, len(argv))
	for i, a := range argv {
		args[i] = []byte(a)
	}
	w := &Writer{Proto: f.proto, Format: fixtureFormat}
	spec := Lookup(args[0])
	switch {
	case spec == nil:
		w.Error(UnknownCommandError(args))
	case !spec.CheckArity(len(args)):
		w.Error(ArityError(spec.Name))
	case spec.CheckSub(args) != nil:
		w.Error(spec.CheckSub(args))
	case spec.Flags&Write != 0 && spec.Validate != nil && spec.Validate(args) != nil:
		w.Error(spec.Validate(args))
	default:
		c := &Ctx{KS: f.ks, DB: f.db, Now: f.now, W: w, Rand: f.rand.Uint64}
		if spec.Flags&Write != 0 {
			f.index++
			c.Index, c.Rand = f.index, nil
		}
		spec.Run(c, args)
		if spec.Name == "select" {
			f.db = c.DB
		}
	}
	return string(w.Bytes())
}

// parseScripts reads testdata/scripts.txt.
func parseScripts(t testing.TB) [][][]string {
	data, err := os.ReadFile("testdata/scripts.txt")
	if err != nil {
		t.Fatal(err)
	}
	var scripts [][][]string
	var cur [][]string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "#") {
			continue
		}
		if line == "" {
			if len(cur) > 0 {
				scripts = append(scripts, cur)
				cur = nil
			}
			continue
		}
		argv, err := splitScriptLine(line)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		cur = append(cur, argv)
	}
	if len(cur) > 0 {
		scripts = append(scripts, cur)
	}
	return scripts
}

// splitScriptLine splits on spaces; an argument starting with '"' is a Go
// quoted string.
func splitScriptLine(line string) ([]string, error) {
	var out []string
	for line != "" {
		line = strings.TrimLeft(line, " ")
		if line == "" {
			break
		}
		if line[0] == '"' {
			q, err := strconv.QuotedPrefix(line)
			if err != nil {
				return nil, err
			}
			s, _ := strconv.Unquote(q)
			out = append(out, s)
			line = line[len(q):]
			continue
		}
		i := strings.IndexByte(line, ' ')
		if i < 0 {
			i = len(line)
		}
		out = append(out, line[:i])
		line = line[i:]
	}
	return out, nil
}

// goldenKey names a reply in the golden file.
func goldenKey(script, step, proto int) string {
	return fmt.Sprintf("%d.%d.%d", script, step, proto)
}

func readGolden(t *testing.T) map[string]string {
	data, err := os.ReadFile("testdata/replies.golden")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		// Lines are key, the command (for reading), and the quoted reply,
		// separated by tabs (which quoting escapes).
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			t.Fatalf("bad golden line %q", line)
		}
		k := f[0]
		v, err := strconv.Unquote(f[2])
		if err != nil {
			t.Fatalf("bad golden line %q: %v", line, err)
		}
		out[k] = v
	}
	return out
}

func TestGolden(t *testing.T) {
	scripts := parseScripts(t)
	if *updateGolden {
		recordGolden(t, scripts)
	}
	golden := readGolden(t)
	n := 0
	for si, script := range scripts {
		for _, proto := range []int{2, 3} {
			f := newFixture(proto)
			for i, argv := range script {
				want, ok := golden[goldenKey(si, i, proto)]
				if !ok {
					t.Fatalf("script %d step %d (%q) has no golden reply: run with -update-golden", si, i, argv)
				}
				want = to72(want)
				if got := f.do(argv...); got != want {
					t.Errorf("script %d step %d RESP%d %q:\n got %q\nwant %q", si, i, proto, argv, got, want)
				}
				n++
			}
		}
	}
	t.Logf("%d replies compared", n)
}

// to72 turns a Redis 7.0 reply into what Redis 7.2 sends where 7.2
// changed it (Goblin follows 7.2).
func to72(reply string) string {
	return strings.ReplaceAll(reply, "+    Prints this help.\r\n", "+    Print this help.\r\n")
}

// recordGolden runs the scripts against a local redis-server.
func recordGolden(t *testing.T, scripts [][][]string) {
	path, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatal("-update-golden needs redis-server")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(path, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var c net.Conn
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err = net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	defer c.Close()
	rd := bufio.NewReader(c)
	do := func(argv ...string) string {
		var b bytes.Buffer
		fmt.Fprintf(&b, "*%d\r\n", len(argv))
		for _, a := range argv {
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Write(b.Bytes()); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := wire.CopyReply(rd, &out); err != nil {
			t.Fatalf("%q: %v", argv, err)
		}
		return out.String()
	}
	var out strings.Builder
	out.WriteString("# Replies of redis-server " + strings.TrimSpace(redisVersion(path)) + " to testdata/scripts.txt,\n")
	out.WriteString("# recorded by go test ./command -run TestGolden -update-golden. Do not edit.\n")
	for si, script := range scripts {
		for _, proto := range []int{2, 3} {
			do("FLUSHALL")
			do("SELECT", "0")
			do("HELLO", strconv.Itoa(proto))
			for i, argv := range script {
				fmt.Fprintf(&out, "%s\t%q\t%q\n", goldenKey(si, i, proto), strings.Join(argv, " "), do(argv...))
			}
		}
	}
	if err := os.WriteFile("testdata/replies.golden", []byte(out.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func redisVersion(path string) string {
	out, _ := exec.Command(path, "--version").Output()
	return string(out)
}
