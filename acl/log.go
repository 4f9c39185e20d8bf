package acl

import (
	"sync"

	"github.com/goblindb/goblin/internal/newest"
)

// Context is where a denied command ran.
type Context uint8

// Contexts, as ACL LOG names them.
const (
	TopLevel Context = iota
	Multi
	Lua
	Module
)

func (c Context) String() string {
	switch c {
	case TopLevel:
		return "toplevel"
	case Multi:
		return "multi"
	case Lua:
		return "lua"
	case Module:
		return "module"
	}
	return "unknown"
}

// LogEntry is an ACL LOG entry: a denial, or several alike.
type LogEntry struct {
	Count    int64
	Reason   Reason
	Context  Context
	Object   string // the command's full name, the key, or AUTH/HELLO as sent
	Username string
	// ClientInfo is the CLIENT LIST line of the last client denied.
	ClientInfo string
	// ID and Created identify the entry; Updated is when it last grew
	// (Unix milliseconds).
	ID      int64
	Created int64
	Updated int64
}

// groupWindow is how close in time a denial must be to an entry's last
// one to be counted in it.
const groupWindow = 60000

// groupScan is how many recent entries a denial is compared with.
const groupScan = 10

// DefaultLogMax is the default of acllog-max-len.
const DefaultLogMax = 128

// Log is a node's ACL log: the most recent denials first, alike denials
// grouped, at most Max entries. It is safe for concurrent use.
type Log struct {
	mu sync.Mutex
	// entries, oldest first: a new denial costs the same however many
	// are kept (newest.Log).
	entries newest.Log[*LogEntry]
	nextID  int64
	max     int
	// Denials counted by reason, for INFO: auth, command, key, channel.
	denied [5]int64
}

// NewLog returns an empty log holding at most max entries.
func NewLog(max int) *Log { return &Log{max: max} }

// SetMax changes the number of entries kept, dropping the oldest beyond.
func (l *Log) SetMax(max int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.max = max
	l.entries.Keep(max)
}

// Max returns the number of entries kept.
func (l *Log) Max() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.max
}

// Add records a denial at now (Unix ms). A denial like one of the ten
// most recent entries (same reason, context, object and user, within a
// minute of its last update) is counted in it, which moves to the front;
// otherwise it is a new entry.
func (l *Log) Add(reason Reason, ctx Context, object, username, clientInfo string, now int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.denied[reason]++
	live := l.entries.Entries()
	for k := 0; k < groupScan && k < len(live); k++ {
		i := len(live) - 1 - k
		e := live[i]
		d := e.Updated - now
		if d < 0 {
			d = -d
		}
		if e.Reason != reason || e.Context != ctx || d > groupWindow || e.Object != object || e.Username != username {
			continue
		}
		e.Count++
		e.Updated = now
		e.ClientInfo = clientInfo
		copy(live[i:], live[i+1:])
		live[len(live)-1] = e
		return
	}
	e := &LogEntry{Count: 1, Reason: reason, Context: ctx, Object: object, Username: username,
		ClientInfo: clientInfo, ID: l.nextID, Created: now, Updated: now}
	l.nextID++
	l.entries.Add(e, l.max)
}

// Entries returns copies of the count most recent entries.
func (l *Log) Entries(count int) []LogEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	live := l.entries.Entries()
	count = min(count, len(live))
	out := make([]LogEntry, count)
	for i := range out {
		out[i] = *live[len(live)-1-i]
	}
	return out
}

// Reset drops every entry (the entry IDs go on from where they were).
func (l *Log) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries.Reset()
}

// Denied returns how many denials were recorded for reason since start.
func (l *Log) Denied(reason Reason) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.denied[reason]
}
