package command

import (
	"sort"
	"strings"
)

// Flags describe a command, as COMMAND INFO reports them.
type Flags uint16

// Command flags.
const (
	Write    Flags = 1 << iota // changes the keyspace: goes through the log
	ReadOnly                   // reads the keyspace
	Fast                       // O(1) or O(log N)
	Blocking                   // may block the client
	Admin                      // administrative
	DenyOOM                    // may grow memory use
	NoMulti                    // not allowed inside MULTI
	Loading                    // allowed while loading
	Stale                      // allowed on a stale replica
)

var flagNames = []struct {
	f    Flags
	name string
}{
	{Write, "write"}, {ReadOnly, "readonly"}, {DenyOOM, "denyoom"}, {Admin, "admin"},
	{Blocking, "blocking"}, {Loading, "loading"}, {Stale, "stale"}, {Fast, "fast"},
	{NoMulti, "no_multi"},
}

// Names returns the flag names in Redis's order.
func (f Flags) Names() []string {
	var out []string
	for _, n := range flagNames {
		if f&n.f != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

// Spec describes one command.
type Spec struct {
	Name string // lowercase
	// Arity is Redis's arity: exact if positive, minimum if negative.
	// Taken from the command's metadata when not stated.
	Arity int
	Flags Flags
	// Sub, for container commands (OBJECT, MEMORY), gives each
	// subcommand's arity, counting the command name: Redis checks them
	// before running anything, like an unknown command.
	Sub map[string]int
	// Run executes the command and writes its reply.
	Run func(c *Ctx, argv [][]byte)
	// Meta is the command's Redis metadata (categories, key specs).
	Meta *Meta
	// Validate, for write commands, checks the arguments without the
	// keyspace, so malformed commands are answered before reaching the
	// log. It returns nil when Run may be proposed.
	Validate func(argv [][]byte) error
	// Edge marks a command the RESP edge runs itself (connection,
	// transaction and server commands, edge.go); InMulti says what a
	// transaction does with it. Run, when set too, is how the state
	// machine runs it inside a transaction.
	Edge    bool
	InMulti MultiMode
	// Served lists the subcommands Goblin answers when Sub is nil (nil:
	// all of them); with Sub, they are Sub's.
	Served []string
}

// MultiMode says what a transaction does with a command the edge runs.
type MultiMode uint8

// What MULTI does with an edge command.
const (
	MultiRefuse MultiMode = iota // refused: the transaction is doomed
	MultiRunNow                  // runs at once (the transaction commands themselves)
	MultiQueue                   // queued; the state machine runs it (Run) at EXEC
	MultiAtExec                  // queued; the edge runs it once EXEC's entry is applied
)

// CheckArity reports whether argc arguments (command name included) fit.
func (s *Spec) CheckArity(argc int) bool {
	if s.Arity > 0 {
		return argc == s.Arity
	}
	return argc >= -s.Arity
}

// CheckSub checks a container command's subcommand and its arity, with
// Redis's error texts; nil for other commands.
func (s *Spec) CheckSub(argv [][]byte) error { return CheckSubcommand(s.Name, s.Sub, argv) }

// CheckSubcommand checks argv's subcommand against subs (name to arity,
// counting the command name) as Redis does before running a container
// command: an unknown subcommand or a wrong arity is an error. It is nil
// when subs is nil or argv has no subcommand.
func CheckSubcommand(name string, subs map[string]int, argv [][]byte) error {
	if subs == nil || len(argv) < 2 {
		return nil
	}
	sub := strings.ToLower(string(argv[1]))
	arity, ok := subs[sub]
	if !ok {
		return UnknownSubcommandError(argv)
	}
	if (arity > 0 && len(argv) != arity) || (arity < 0 && len(argv) < -arity) {
		return ArityError(name + "|" + sub)
	}
	return nil
}

var table = map[string]*Spec{}

func register(specs ...*Spec) {
	for _, s := range specs {
		if _, dup := table[s.Name]; dup {
			panic("command: " + s.Name + " registered twice")
		}
		s.Meta = metaByName[s.Name]
		if s.Meta != nil && s.Arity == 0 {
			s.Arity = s.Meta.Arity
		}
		subs := s.Served
		for sub := range s.Sub {
			subs = append(subs, sub)
		}
		sort.Strings(subs)
		MarkServed(s.Name, subs)
		table[s.Name] = s
	}
}

// Lookup returns the spec of the command named name (any case) if the
// state machine can run it (it has a Run), or nil.
func Lookup(name []byte) *Spec {
	if s := Find(name); s != nil && s.Run != nil {
		return s
	}
	return nil
}

// Find returns the spec of the served command named name (any case), or
// nil: the state machine's commands and the edge's.
func Find(name []byte) *Spec {
	var tmp [32]byte
	if len(name) > len(tmp) {
		return table[strings.ToLower(string(name))]
	}
	for i, c := range name {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		tmp[i] = c
	}
	return table[string(tmp[:len(name)])]
}

// All returns every registered spec, in no particular order.
func All() []*Spec {
	out := make([]*Spec, 0, len(table))
	for _, s := range table {
		out = append(out, s)
	}
	return out
}

// eq reports whether arg equals the lowercase word w, ignoring ASCII case.
func eq(arg []byte, w string) bool {
	if len(arg) != len(w) {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := arg[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != w[i] {
			return false
		}
	}
	return true
}
