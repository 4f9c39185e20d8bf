package resp

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/goblindb/goblin/acl"
	"github.com/goblindb/goblin/command"
	"github.com/goblindb/goblin/keyspace"
	"github.com/goblindb/goblin/raftfsm"
	"github.com/goblindb/goblin/resp/wire"
)

// CONFIG GET, SET, RESETSTAT, REWRITE and HELP.
//
// CONFIG GET answers Goblin's own settings (the port, the fsync mode, the
// password) and, with Redis's values, the settings clients and tools probe
// at connect time. CONFIG SET changes what can change at run time:
// requirepass sets the default user's password on every node (see
// acl.go); the zset encoding
// thresholds are accepted and kept (Goblin has one structure for every
// size, so they change nothing), which lets tools and test suites that
// tune them run. Every other setting is fixed at startup and refused as
// Redis refuses an immutable one; those Redis does let CONFIG SET change
// (save, appendonly, appendfsync, timeout, notify-keyspace-events,
// proto-max-bulk-len, port, tls-port) take the value they hold, so
// a script that sets what Goblin already does (CONFIG SET save "" to turn
// RDB snapshots off) runs, and refuse another value saying what Goblin
// keeps.

// param is one configuration parameter.
type param struct {
	name string
	get  func(s *Server) string
	// set validates and stores a value; nil: immutable.
	set func(s *Server, v string) error
}

// settings holds the values CONFIG SET may change that have no home
// elsewhere.
type settings struct {
	mu sync.Mutex
	kv map[string]string
}

func (st *settings) get(name, def string) string {
	st.mu.Lock()
	defer st.mu.Unlock()
	if v, ok := st.kv[name]; ok {
		return v
	}
	return def
}

func (st *settings) put(name, v string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.kv == nil {
		st.kv = map[string]string{}
	}
	st.kv[name] = v
}

func fixed(v string) func(*Server) string { return func(*Server) string { return v } }

// held makes p, a setting Redis can change and Goblin keeps, accept the
// value it holds (ASCII case aside) and refuse any other.
func held(p param) param {
	p.set = func(s *Server, v string) error {
		if cur := p.get(s); !strings.EqualFold(v, cur) {
			return fmt.Errorf("Goblin keeps it at '%s'", cur)
		}
		return nil
	}
	return p
}

// numeric is a parameter kept in settings: an integer within [lo, hi],
// or with memory set a byte count that may carry a unit (1kb, 5m), as
// Redis's numeric configs parse them.
func numeric(name, def string, lo, hi int64, memory bool) param {
	return param{
		name: name,
		get:  func(s *Server) string { return s.settings.get(name, def) },
		set: func(s *Server, v string) error {
			parse := parseBounded
			if memory {
				parse = parseMemoryBounded
			}
			n, err := parse(v, lo, hi)
			if err == nil {
				s.settings.put(name, strconv.FormatInt(n, 10))
			}
			return err
		},
	}
}

// parseBounded parses an integer setting within [lo, hi], with Redis's
// error texts.
func parseBounded(v string, lo, hi int64) (int64, error) {
	n, ok := command.ParseInt([]byte(v))
	switch {
	case !ok:
		return 0, errors.New("argument couldn't be parsed into an integer")
	case n < lo || n > hi:
		return 0, fmt.Errorf("argument must be between %d and %d inclusive", lo, hi)
	}
	return n, nil
}

// parseMemoryBounded parses a memory setting within [lo, hi] (lo >= 0) as
// CONFIG SET does, with Redis's error texts.
func parseMemoryBounded(v string, lo, hi int64) (int64, error) {
	u, ok := memtoull(v)
	switch {
	case !ok:
		return 0, errors.New("argument must be a memory value")
	case u < uint64(lo) || u > uint64(hi):
		return 0, fmt.Errorf("argument must be between %d and %d inclusive", lo, hi)
	}
	return int64(u), nil
}

// memtoull reads a memory value as Redis's memtoull does for CONFIG SET:
// digits and an optional unit (b, k, kb, m, mb, g, gb, any case), no
// sign; a number past 64 bits counts as the largest, and the unit's
// product wraps around as C's unsigned arithmetic does, so that the
// setting's bounds, not the parse, refuse it (with their own text).
func memtoull(v string) (uint64, bool) {
	digits, mul, ok := splitMemory(v)
	if !ok || len(digits) >= 128 {
		return 0, false
	}
	n := uint64(0)
	if digits != "" {
		var err error
		if n, err = strconv.ParseUint(digits, 10, 64); err != nil {
			n = math.MaxUint64 // only digits: the error is a range error
		}
	}
	return n * mul, true
}

// splitMemory splits a memory value into its digits and its unit's
// multiplier.
func splitMemory(v string) (digits string, mul uint64, ok bool) {
	i := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	mul, ok = memoryUnits[strings.ToLower(v[i:])]
	return v[:i], mul, ok
}

// memoryUnits are the units of a memory value, by their lower-case name.
var memoryUnits = map[string]uint64{"": 1, "b": 1, "k": 1000, "kb": 1024, "m": 1000 * 1000, "mb": 1024 * 1024,
	"g": 1000 * 1000 * 1000, "gb": 1024 * 1024 * 1024}

// ParseMemory reads a memory value as a flag: digits and an optional unit
// (b, k, kb, m, mb, g, gb, any case); values past int64 are refused.
func ParseMemory(v string) (int64, bool) {
	n, ok := ParseMemoryUint64(v)
	if !ok || n > math.MaxInt64 {
		return 0, false
	}
	return int64(n), true
}

// ParseMemoryUint64 is ParseMemory up to 2^64-1, the range of Redis's
// maxmemory; a value past it is refused (where CONFIG SET, as Redis,
// takes the largest or wraps the unit's product around).
func ParseMemoryUint64(v string) (uint64, bool) {
	digits, mul, ok := splitMemory(v)
	if !ok {
		return 0, false
	}
	n := uint64(0)
	if digits != "" {
		var err error
		if n, err = strconv.ParseUint(digits, 10, 64); err != nil {
			return 0, false
		}
	}
	if n > math.MaxUint64/mul {
		return 0, false
	}
	return n * mul, true
}

const sizeMax = math.MaxInt64 // Redis's size_t configs allow 0..LONG_MAX

// aliases maps Redis's old parameter names to the current ones.
var aliases = map[string]string{
	"zset-max-ziplist-entries": "zset-max-listpack-entries",
	"zset-max-ziplist-value":   "zset-max-listpack-value",
	"hash-max-ziplist-entries": "hash-max-listpack-entries",
	"hash-max-ziplist-value":   "hash-max-listpack-value",
	"list-max-ziplist-size":    "list-max-listpack-size",
	"slaveof":                  "replicaof",
}

func (s *Server) params() map[string]param {
	ps := []param{
		{name: "databases", get: fixed(strconv.Itoa(keyspace.NumDBs))},
		{name: "maxmemory", get: getMaxMemory, set: s.memorySetter()},
		{name: "maxmemory-policy", get: fixed("noeviction"), set: setMaxMemoryPolicy},
		held(param{name: "save", get: fixed("")}),
		held(param{name: "appendonly", get: fixed("no")}),
		held(param{name: "appendfsync", get: func(s *Server) string { return s.backend.Status().Fsync }}),
		held(param{name: "timeout", get: fixed("0")}),
		{name: "maxclients", get: func(s *Server) string { return strconv.FormatInt(s.MaxClients(), 10) },
			set: func(s *Server, v string) error {
				n, err := parseBounded(v, 1, math.MaxUint32)
				if err != nil {
					return err
				}
				return s.setMaxClients(n)
			}},
		held(param{name: "proto-max-bulk-len", get: fixed(strconv.Itoa(wire.ProtoMaxBulkLen))}),
		{name: "cluster-enabled", get: func(s *Server) string {
			if s.backend.Status().Clustered {
				return "yes"
			}
			return "no"
		}},
		{name: "slowlog-log-slower-than", get: func(s *Server) string { return strconv.FormatInt(s.slowlog.threshold.Load(), 10) },
			set: func(s *Server, v string) error {
				n, err := parseBounded(v, -1, math.MaxInt64)
				if err == nil {
					s.slowlog.threshold.Store(n)
				}
				return err
			}},
		{name: "slowlog-max-len", get: func(s *Server) string { return strconv.FormatInt(s.slowlog.maxLen.Load(), 10) },
			set: func(s *Server, v string) error {
				n, err := parseBounded(v, 0, math.MaxInt64)
				if err == nil {
					s.slowlog.maxLen.Store(n)
					s.slowlog.mu.Lock()
					s.slowlog.trim()
					s.slowlog.mu.Unlock()
				}
				return err
			}},
		{name: "latency-monitor-threshold", get: func(s *Server) string { return strconv.FormatInt(s.latency.threshold.Load(), 10) },
			set: func(s *Server, v string) error {
				n, err := parseBounded(v, 0, math.MaxInt64)
				if err == nil {
					s.latency.threshold.Store(n)
				}
				return err
			}},
		held(param{name: "notify-keyspace-events", get: fixed("")}),
		{name: "replicaof", get: fixed("")},
		held(param{name: "port", get: func(s *Server) string { return addrPort(s.Addr()) }}),
		held(param{name: "tls-port", get: func(s *Server) string { return addrPort(s.TLSAddr()) }}),
		{name: "bind", get: func(s *Server) string {
			if a := s.Addr(); a != nil {
				return a.String()
			}
			if a := s.TLSAddr(); a != nil {
				return a.String()
			}
			return ""
		}},
		{name: "unixsocket", get: func(s *Server) string { return s.cfg.UnixSocket }},
		{name: "requirepass", get: func(s *Server) string { return s.password() }, set: setRequirePass},
		{name: "acllog-max-len", get: func(s *Server) string { return strconv.Itoa(s.acl.log.Max()) },
			set: func(s *Server, v string) error {
				n, err := parseBounded(v, 0, math.MaxInt64)
				if err == nil {
					s.acl.log.SetMax(int(n))
				}
				return err
			}},
		queryBufferLimitParam(),
		outputBufferLimitParam(),
		numeric("zset-max-listpack-entries", "128", 0, sizeMax, false),
		numeric("zset-max-listpack-value", "64", 0, sizeMax, true),
		numeric("hash-max-listpack-entries", "512", 0, sizeMax, false),
		numeric("hash-max-listpack-value", "64", 0, sizeMax, true),
		numeric("set-max-intset-entries", "512", 0, sizeMax, false),
		numeric("set-max-listpack-entries", "128", 0, sizeMax, false),
		numeric("set-max-listpack-value", "64", 0, sizeMax, false),
		numeric("list-max-listpack-size", "-2", math.MinInt32, math.MaxInt32, false),
	}
	m := make(map[string]param, len(ps)+len(s.cfg.Settings))
	for _, p := range ps {
		m[p.name] = p
	}
	for k, v := range s.cfg.Settings {
		m[k] = param{name: k, get: fixed(v)}
	}
	return m
}

func getMaxMemory(s *Server) string {
	if mb := s.mem; mb != nil {
		return strconv.FormatUint(mb.MaxMemory(), 10)
	}
	return "0"
}

// memorySetter sets this node's maxmemory, which it enforces while it
// leads (node/memory.go); nil (immutable) for a backend without a limit.
func (s *Server) memorySetter() func(*Server, string) error {
	if s.mem == nil {
		return nil
	}
	return func(s *Server, v string) error {
		// Any 64-bit value, as Redis takes.
		u, ok := memtoull(v)
		if !ok {
			return errors.New("argument must be a memory value")
		}
		s.mem.SetMaxMemory(u)
		return nil
	}
}

// setMaxMemoryPolicy accepts noeviction, the one policy Goblin has: it
// evicts no key, so a policy that would is refused rather than silently
// not applied.
func setMaxMemoryPolicy(s *Server, v string) error {
	if !strings.EqualFold(v, "noeviction") {
		return errors.New("argument(s) must be one of the following: noeviction")
	}
	return nil
}

// setRequirePass makes v the default user's only password ("": nopass),
// on every node, as Redis applies requirepass to its default user. This
// node keeps v for CONFIG GET.
func setRequirePass(s *Server, v string) error {
	reply, err := s.proposeACL(&raftfsm.ACLChange{Kind: raftfsm.ACLSetUser,
		Users: []raftfsm.ACLUser{{Name: acl.DefaultUser, Rules: acl.HashRules(defaultPasswordRules(v))}}})
	if err != nil {
		return translate(err)
	}
	if len(reply) > 0 && reply[0] == '-' {
		return errors.New(strings.TrimSpace(string(reply[1:])))
	}
	s.setPassword(v)
	return nil
}

// lookupParam finds a parameter by name or alias, ignoring case.
func lookupParam(ps map[string]param, name string) (param, bool) {
	n := strings.ToLower(name)
	if a, ok := aliases[n]; ok {
		n = a
	}
	p, ok := ps[n]
	return p, ok
}

func cmdConfig(c *client, argv [][]byte) {
	// The subcommand and its arity were checked before (command.Spec.Sub).
	switch strings.ToLower(string(argv[1])) {
	case "get":
		configGet(c, argv[2:])
	case "set":
		configSet(c, argv[2:])
	case "resetstat":
		c.s.stats.reset()
		c.reply(func(w *command.Writer) { w.OK() })
	case "rewrite":
		c.replyError(command.Errorf("ERR The server is running without a config file"))
	case "help":
		c.reply(func(w *command.Writer) {
			command.WriteHelp(w, argv[0], []string{
				"GET <pattern>",
				"    Return parameters matching the glob-like <pattern> and their values.",
				"SET <directive> <value>",
				"    Set the configuration <directive> to <value>.",
				"RESETSTAT",
				"    Reset statistics reported by the INFO command.",
				"REWRITE",
				"    Rewrite the configuration file.",
			})
		})
	}
}

// configGet answers each exact name as given and each pattern with every
// matching name, once.
func configGet(c *client, patterns [][]byte) {
	ps := c.s.params()
	var names []string
	for n := range ps {
		names = append(names, n)
	}
	for a := range aliases {
		if _, ok := ps[aliases[a]]; ok {
			names = append(names, a)
		}
	}
	sort.Strings(names)
	seen := map[string]bool{}
	type kv struct{ k, v string }
	var out []kv
	for _, pat := range patterns {
		if !strings.ContainsAny(string(pat), "[*?") {
			if p, ok := lookupParam(ps, string(pat)); ok && !seen[string(pat)] {
				seen[string(pat)] = true
				out = append(out, kv{string(pat), p.get(c.s)})
			}
			continue
		}
		for _, n := range names {
			if !seen[n] && keyspace.Match(pat, []byte(n), true) {
				seen[n] = true
				p, _ := lookupParam(ps, n)
				out = append(out, kv{n, p.get(c.s)})
			}
		}
	}
	c.reply(func(w *command.Writer) {
		w.Map(len(out))
		for _, e := range out {
			w.BulkString(e.k)
			w.BulkString(e.v)
		}
	})
}

// configSet sets every pair or none, with Redis's error texts.
func configSet(c *client, args [][]byte) {
	if len(args)%2 != 0 {
		c.replyError(command.ErrSyntax)
		return
	}
	ps := c.s.params()
	var chosen []param
	given := map[string]bool{}
	for i := 0; i < len(args); i += 2 {
		p, ok := lookupParam(ps, string(args[i]))
		if !ok {
			c.replyError(command.Errorf("ERR Unknown option or number of arguments for CONFIG SET - '%s'", args[i]))
			return
		}
		if p.set == nil {
			c.replyError(command.Errorf("ERR CONFIG SET failed (possibly related to argument '%s') - can't set immutable config", args[i]))
			return
		}
		// A name given twice is an error; a name and its alias are not
		// (Redis keeps them as two entries), the later one wins.
		if name := strings.ToLower(string(args[i])); given[name] {
			c.replyError(command.Errorf("ERR CONFIG SET failed (possibly related to argument '%s') - duplicate parameter", args[i]))
			return
		} else {
			given[name] = true
		}
		chosen = append(chosen, p)
	}
	// Validate everything before changing anything.
	old := make([]string, len(chosen))
	for i, p := range chosen {
		old[i] = p.get(c.s)
		if err := p.set(c.s, string(args[2*i+1])); err != nil {
			for j := i - 1; j >= 0; j-- {
				chosen[j].set(c.s, old[j])
			}
			c.replyError(command.Errorf("ERR CONFIG SET failed (possibly related to argument '%s') - %s", strings.ToLower(string(args[2*i])), err))
			return
		}
	}
	c.reply(func(w *command.Writer) { w.OK() })
}
