package drill

import "sync"

// Kind is an operation of the workload.
type Kind uint8

const (
	KindZAdd Kind = iota
	KindZIncrBy
	KindZScore
	KindZRange
	// KindWitness adds a unique member to the witness set: every
	// acknowledged one must be on every node at the end.
	KindWitness
)

var kindNames = [...]string{"zadd", "zincrby", "zscore", "zrange", "witness"}

func (k Kind) String() string { return kindNames[k] }

// MarshalText writes the kind as its name in the JSON report.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// Write reports whether the kind changes data.
func (k Kind) Write() bool { return k == KindZAdd || k == KindZIncrBy || k == KindWitness }

// Op is one operation as the client saw it. Times are nanoseconds since
// the start of the run.
type Op struct {
	Client  int     `json:"client"`
	Node    string  `json:"node"`
	Kind    Kind    `json:"kind"`
	Key     int     `json:"key"`              // workload key index (-1: the witness set)
	Member  int     `json:"member,omitempty"` // member index
	Arg     float64 `json:"arg,omitempty"`    // ZADD score, ZINCRBY delta
	Witness string  `json:"witness,omitempty"`
	// Large: the witness write also added a pad of Config.LargeBytes.
	Large   bool    `json:"large,omitempty"`
	Invoke  int64   `json:"invoke"`
	Return  int64   `json:"return"`
	Outcome Outcome `json:"outcome"`
	// Result: ZADD's added count, ZINCRBY's new score, ZSCORE's score
	// (Absent: no such member), ZRANGE's members and scores.
	Added  int64    `json:"added,omitempty"`
	Score  float64  `json:"score,omitempty"`
	Absent bool     `json:"absent,omitempty"`
	Range  []Scored `json:"range,omitempty"`
	Error  string   `json:"error,omitempty"`
}

// Scored is one member of a ZRANGE reply.
type Scored struct {
	Member int     `json:"m"`
	Score  float64 `json:"s"`
}

// history collects the operations of every client.
type history struct {
	mu  sync.Mutex
	ops []Op
}

func (h *history) add(op Op) {
	h.mu.Lock()
	h.ops = append(h.ops, op)
	h.mu.Unlock()
}

func (h *history) all() []Op {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Op(nil), h.ops...)
}
