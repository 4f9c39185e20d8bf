package logthrottle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestKindsAreThrottledAndReported(t *testing.T) {
	var out bytes.Buffer
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	w := New(&out, false)
	w.now = func() time.Time { return now }
	for i := range 1000 {
		fmt.Fprintf(w, "2026-12-03T10:00:%02d.%03dZ [ERROR] goblind.gossip: memberlist: Decrypt packet failed: version %d from=127.0.0.%d:%d\n", i%60, i, i%7, i%255, 20000+i)
		if i%100 == 0 {
			fmt.Fprintf(w, "2026-12-03T10:00:00.000Z [WARN]  goblind.raft: failed to heartbeat to: peer=127.0.0.1:%d\n", 21100+i)
		}
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2*Burst {
		t.Fatalf("%d lines written in one window, want %d of each kind:\n%s", len(lines), 2*Burst, out.String())
	}
	out.Reset()
	now = now.Add(Window)
	fmt.Fprintf(w, "2026-12-03T10:00:10.000Z [INFO]  goblind: something else\n")
	got := out.String()
	if !strings.Contains(got, "dropped=990") || !strings.Contains(got, "from=127.0.0.") || !strings.Contains(got, "something else") {
		t.Fatalf("after the window:\n%s", got)
	}
	if strings.Contains(got, "goblind.raft") {
		t.Fatalf("a kind that dropped nothing was reported:\n%s", got)
	}
}

func TestJSONReport(t *testing.T) {
	var out bytes.Buffer
	now := time.Now()
	w := New(&out, true)
	w.now = func() time.Time { return now }
	for i := range Burst + 3 {
		fmt.Fprintf(w, `{"@level":"error","@message":"failed to decode incoming command","n":%d}`+"\n", i)
	}
	out.Reset()
	now = now.Add(Window)
	w.Write([]byte(`{"@level":"info","@message":"x"}` + "\n"))
	first, _, _ := strings.Cut(out.String(), "\n")
	var m map[string]any
	if err := json.Unmarshal([]byte(first), &m); err != nil || m["dropped"] != float64(3) || m["@level"] != "warn" {
		t.Fatalf("report %q: %v %v", first, m, err)
	}
}

// Lines of more kinds than are tracked share one budget, so varied
// junk cannot grow the table or the log without bound.
func TestKindsBounded(t *testing.T) {
	var out bytes.Buffer
	w := New(&out, false)
	for i := range maxKinds * 3 {
		fmt.Fprintf(w, "kind %s\n", strings.Repeat(string(rune('a'+i%26)), 1+i/26))
	}
	if len(w.kinds) > maxKinds+1 {
		t.Fatalf("%d kinds tracked", len(w.kinds))
	}
	if n := strings.Count(out.String(), "\n"); n > maxKinds+Burst {
		t.Fatalf("%d lines written", n)
	}
}
