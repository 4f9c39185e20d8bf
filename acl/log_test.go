package acl

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// Alike denials are counted in one entry, which moves to the front; an
// entry older than a minute, or past the ten most recent, is not grown.
func TestLogGrouping(t *testing.T) {
	l := NewLog(DefaultLogMax)
	l.Add(DeniedAuth, TopLevel, "AUTH", "user1", "c1", 1000)
	for i := 0; i < 10; i++ {
		l.Add(DeniedAuth, TopLevel, "AUTH", "user1", "c2", 2000)
	}
	e := l.Entries(10)
	if len(e) != 1 || e[0].Count != 11 || e[0].Created != 1000 || e[0].Updated != 2000 || e[0].ClientInfo != "c2" || e[0].ID != 0 {
		t.Fatalf("entries %+v", e)
	}
	l.Add(DeniedAuth, TopLevel, "AUTH", "user2", "c", 3000)
	if e := l.Entries(10); len(e) != 2 || e[0].ID != 1 || e[0].Username != "user2" {
		t.Fatalf("entries %+v", e)
	}
	// Back to user1: grouped, moved to the front.
	l.Add(DeniedAuth, TopLevel, "AUTH", "user1", "c", 4000)
	if e := l.Entries(10); e[0].ID != 0 || e[0].Count != 12 {
		t.Fatalf("entries %+v", e)
	}
	// Another context, object or reason is another entry.
	l.Add(DeniedAuth, Multi, "AUTH", "user1", "c", 4000)
	l.Add(DeniedCommand, TopLevel, "AUTH", "user1", "c", 4000)
	l.Add(DeniedAuth, TopLevel, "HELLO", "user1", "c", 4000)
	if e := l.Entries(10); len(e) != 5 {
		t.Fatalf("%d entries", len(e))
	}
	// More than a minute after its last update: a new entry.
	l.Add(DeniedAuth, TopLevel, "HELLO", "user1", "c", 4000+60001)
	if e := l.Entries(10); len(e) != 6 || e[0].ID != 5 {
		t.Fatalf("entries %+v", e[0])
	}
	if n := l.Denied(DeniedAuth); n != 16 {
		t.Errorf("%d auth denials", n)
	}
}

func TestLogScanLimit(t *testing.T) {
	l := NewLog(DefaultLogMax)
	l.Add(DeniedKey, TopLevel, "k0", "u", "", 0)
	for i := 1; i <= 10; i++ {
		l.Add(DeniedKey, TopLevel, "k"+string(rune('0'+i)), "u", "", 0)
	}
	// k0 is now the 11th entry: beyond the ten compared.
	l.Add(DeniedKey, TopLevel, "k0", "u", "", 0)
	if e := l.Entries(100); len(e) != 12 || e[0].Count != 1 {
		t.Fatalf("%d entries, front %+v", len(e), e[0])
	}
}

func TestLogMax(t *testing.T) {
	l := NewLog(5)
	for i := 0; i < 10; i++ {
		l.Add(DeniedKey, TopLevel, string(rune('a'+i)), "u", "", 0)
	}
	e := l.Entries(100)
	if len(e) != 5 || e[0].Object != "j" || e[4].Object != "f" {
		t.Fatalf("entries %+v", e)
	}
	l.SetMax(2)
	if len(l.Entries(100)) != 2 {
		t.Fatal("SetMax kept more")
	}
	l.Reset()
	if len(l.Entries(100)) != 0 {
		t.Fatal("Reset kept entries")
	}
	l.Add(DeniedKey, TopLevel, "x", "u", "", 0)
	if e := l.Entries(1); e[0].ID != 10 {
		t.Fatalf("IDs restarted: %d", e[0].ID)
	}
}

// The log answers as a newest-first list doing the same grouping would,
// through max changes and resets.
func TestLogAgainstAList(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	l := NewLog(DefaultLogMax)
	var model []LogEntry // newest first
	maxLen, nextID, now := DefaultLogMax, int64(0), int64(0)
	for step := range 20000 {
		switch r.IntN(100) {
		case 0:
			maxLen = r.IntN(30)
			l.SetMax(maxLen)
			model = model[:min(len(model), maxLen)]
		case 1:
			l.Reset()
			model = nil
		}
		now += int64(r.IntN(20000))
		reason, ctx := Reason(1+r.IntN(3)), Context(r.IntN(2))
		object, user, info := "k"+strconv.Itoa(r.IntN(4)), "u"+strconv.Itoa(r.IntN(3)), "c"+strconv.Itoa(step)
		l.Add(reason, ctx, object, user, info, now)
		grouped := false
		for i := 0; i < len(model) && i < groupScan; i++ {
			e := model[i]
			if e.Reason == reason && e.Context == ctx && e.Object == object && e.Username == user && now-e.Updated <= groupWindow {
				e.Count++
				e.Updated, e.ClientInfo = now, info
				copy(model[1:i+1], model[:i])
				model[0] = e
				grouped = true
				break
			}
		}
		if !grouped {
			model = append([]LogEntry{{Count: 1, Reason: reason, Context: ctx, Object: object, Username: user,
				ClientInfo: info, ID: nextID, Created: now, Updated: now}}, model...)
			model = model[:min(len(model), maxLen)]
			nextID++
		}
		got := l.Entries(1 << 30)
		if len(got) != len(model) {
			t.Fatalf("step %d: %d entries, want %d", step, len(got), len(model))
		}
		for i := range got {
			if got[i] != model[i] {
				t.Fatalf("step %d: entry %d is %+v, want %+v", step, i, got[i], model[i])
			}
		}
	}
}

// BenchmarkLogNewDenials: every denial a new entry (a client trying
// user names), the log full.
func BenchmarkLogNewDenials(b *testing.B) {
	for _, max := range []int{DefaultLogMax, 10000} {
		b.Run("max="+strconv.Itoa(max), func(b *testing.B) {
			l := NewLog(max)
			names := make([]string, 64)
			for i := range names {
				names[i] = "user" + strconv.Itoa(i)
			}
			i := 0
			for b.Loop() {
				l.Add(DeniedAuth, TopLevel, "AUTH", names[i%len(names)], "", int64(i)*groupWindow)
				i++
			}
		})
	}
}

func TestGenPass(t *testing.T) {
	for bits, n := range map[int]int{1: 1, 4: 1, 5: 2, 256: 64, 4096: 1024} {
		p := GenPass(bits)
		if len(p) != n {
			t.Errorf("%d bits: %q", bits, p)
		}
		for _, c := range p {
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				t.Errorf("%d bits: %q", bits, p)
			}
		}
	}
}
