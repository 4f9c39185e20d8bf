package command

import (
	"sort"
	"strings"
)

// Redis's command metadata: what COMMAND INFO reports and what ACLs check.
//
// Every command of Redis 7.2 is described (redismeta.go, generated from
// Redis's own command files), whether or not Goblin serves it: ACL rules
// written for Redis (+get, -@string, -client|kill) name commands and
// categories Goblin does not serve, and an aclfile that Redis accepts must
// load here too. Goblin's own commands (ZCREATE, GOBLIN) are described
// beside them (goblinMeta). Each command and subcommand has an ID, dense
// from 0, which ACL permission bitmaps index.
//
// A Meta is served when Goblin answers it: every command registered in
// the table (table.go), the state machine's and the edge's (edge.go), and
// the subcommands they serve (MarkServed). COMMAND and ACL CAT list the
// served ones only.

// CmdFlags are Redis's command flags.
type CmdFlags uint32

// Command flags, as Redis's command files name them.
const (
	CmdWrite CmdFlags = 1 << iota
	CmdReadOnly
	CmdDenyOOM
	CmdModule
	CmdAdmin
	CmdPubSub
	CmdNoScript
	CmdBlocking
	CmdLoading
	CmdStale
	CmdSkipMonitor
	CmdSkipSlowlog
	CmdAsking
	CmdFast
	CmdNoAuth
	CmdMayReplicate
	CmdSentinel
	CmdNoMandatoryKeys
	CmdProtected
	CmdNoAsyncLoading
	CmdNoMulti
	CmdMovableKeys // derived from the key specs, as Redis does
	CmdAllowBusy
	CmdTouchesArbitraryKeys
)

// cmdFlagNames are the flags COMMAND INFO reports, in its order (Redis
// hides may_replicate, sentinel, protected and touches_arbitrary_keys).
var cmdFlagNames = []struct {
	f    CmdFlags
	name string
}{
	{CmdWrite, "write"}, {CmdReadOnly, "readonly"}, {CmdDenyOOM, "denyoom"}, {CmdModule, "module"},
	{CmdAdmin, "admin"}, {CmdPubSub, "pubsub"}, {CmdNoScript, "noscript"}, {CmdBlocking, "blocking"},
	{CmdLoading, "loading"}, {CmdStale, "stale"}, {CmdSkipMonitor, "skip_monitor"},
	{CmdSkipSlowlog, "skip_slowlog"}, {CmdAsking, "asking"}, {CmdFast, "fast"}, {CmdNoAuth, "no_auth"},
	{CmdNoMandatoryKeys, "no_mandatory_keys"}, {CmdNoAsyncLoading, "no_async_loading"},
	{CmdNoMulti, "no_multi"}, {CmdMovableKeys, "movablekeys"}, {CmdAllowBusy, "allow_busy"},
}

// Names returns the flags COMMAND INFO reports, in its order.
func (f CmdFlags) Names() []string {
	var out []string
	for _, n := range cmdFlagNames {
		if f&n.f != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

// Category is a set of Redis's ACL command categories.
type Category uint32

// ACL categories, in Redis's order (ACL CAT lists them so).
const (
	CatKeyspace Category = 1 << iota
	CatRead
	CatWrite
	CatSet
	CatSortedSet
	CatList
	CatHash
	CatString
	CatBitmap
	CatHyperLogLog
	CatGeo
	CatStream
	CatPubSub
	CatAdmin
	CatFast
	CatSlow
	CatBlocking
	CatDangerous
	CatConnection
	CatTransaction
	CatScripting
)

var categoryNames = []string{
	"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap", "hyperloglog",
	"geo", "stream", "pubsub", "admin", "fast", "slow", "blocking", "dangerous", "connection",
	"transaction", "scripting",
}

// CategoryNames returns every category's name, in Redis's order.
func CategoryNames() []string { return append([]string(nil), categoryNames...) }

// CategoryByName returns the category named name (any case), or 0.
func CategoryByName(name string) Category {
	for i, n := range categoryNames {
		if strings.EqualFold(n, name) {
			return 1 << i
		}
	}
	return 0
}

// Names returns the names of the categories in c, in Redis's order.
func (c Category) Names() []string {
	var out []string
	for i, n := range categoryNames {
		if c&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// implicit adds the categories Redis derives from a command's flags.
func implicit(f CmdFlags, c Category) Category {
	if f&CmdWrite != 0 {
		c |= CatWrite
	}
	if f&CmdReadOnly != 0 && c&CatScripting == 0 {
		c |= CatRead
	}
	if f&CmdAdmin != 0 {
		c |= CatAdmin | CatDangerous
	}
	if f&CmdPubSub != 0 {
		c |= CatPubSub
	}
	if f&CmdFast != 0 {
		c |= CatFast
	}
	if f&CmdBlocking != 0 {
		c |= CatBlocking
	}
	if c&CatFast == 0 {
		c |= CatSlow
	}
	return c
}

// KeyFlags are a key spec's flags.
type KeyFlags uint16

// Key spec flags, in the order COMMAND INFO reports them.
const (
	KeyRO KeyFlags = 1 << iota
	KeyRW
	KeyOW
	KeyRM
	KeyAccess
	KeyUpdate
	KeyInsert
	KeyDelete
	KeyNotKey
	KeyIncomplete
	KeyVariableFlags
)

var keyFlagNames = []string{"RO", "RW", "OW", "RM", "access", "update", "insert", "delete", "not_key",
	"incomplete", "variable_flags"}

// Names returns the flags' names in COMMAND INFO's order.
func (f KeyFlags) Names() []string {
	var out []string
	for i, n := range keyFlagNames {
		if f&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// Reads reports whether a key with these flags is read (ACL %R~), and
// Writes whether it is written (%W~): access is a read; insert, update
// and delete are writes.
func (f KeyFlags) Reads() bool  { return f&KeyAccess != 0 }
func (f KeyFlags) Writes() bool { return f&(KeyInsert|KeyUpdate|KeyDelete) != 0 }

// BeginSearch says where a key spec's keys start: at an index, after a
// keyword (searched from StartFrom, backwards when negative), or unknown.
type BeginSearch struct {
	Index     int // > 0 for an index search
	Keyword   string
	StartFrom int
}

// FindKeys says which arguments from the start are keys: a range
// (LastKey relative to the start, negative from the end; every KeyStep;
// Limit divides the rest when LastKey is -1), a count (the argument at
// KeyNumIdx from the start, keys from FirstKey on, every KeyStep), or
// unknown.
type FindKeys struct {
	Range   bool
	LastKey int
	Limit   int
	KeyNum  bool
	NumIdx  int
	First   int
	KeyStep int
}

// KeySpec is one of a command's key specs.
type KeySpec struct {
	Flags KeyFlags
	Begin BeginSearch
	Find  FindKeys
}

func atIndex(pos int) BeginSearch { return BeginSearch{Index: pos} }

func afterKeyword(kw string, from int) BeginSearch { return BeginSearch{Keyword: kw, StartFrom: from} }

func keyRange(last, step, limit int) FindKeys {
	return FindKeys{Range: true, LastKey: last, KeyStep: step, Limit: limit}
}

func keyNum(idx, first, step int) FindKeys {
	return FindKeys{KeyNum: true, NumIdx: idx, First: first, KeyStep: step}
}

// Meta is a command's or subcommand's metadata.
type Meta struct {
	Name  string // lowercase; a subcommand's is "parent|sub"
	Arity int
	Group string // a subcommand's is its parent's
	Flags CmdFlags
	// Categories holds the declared categories and, once the table is
	// built, the implicit ones.
	Categories Category
	Tips       []string // COMMAND INFO's tips, lowercase
	KeySpecs   []KeySpec
	Subs       []*Meta // sorted by name
	Parent     *Meta
	// ID indexes ACL permission bitmaps.
	ID int
	// Served: Goblin answers this command (MarkServed).
	Served bool
	// First, Last and Step are the legacy key range COMMAND INFO reports.
	First, Last, Step int
	// Doc is what COMMAND DOCS reports (docs.go).
	Doc *Doc
}

// SubName returns a subcommand's own name ("get" for "config|get").
func (m *Meta) SubName() string {
	if i := strings.IndexByte(m.Name, '|'); i >= 0 {
		return m.Name[i+1:]
	}
	return m.Name
}

// Sub returns the subcommand of m named name (any case), or nil.
func (m *Meta) Sub(name []byte) *Meta {
	for _, s := range m.Subs {
		if eq(name, s.SubName()) {
			return s
		}
	}
	return nil
}

// HasKeys reports whether the command has a key spec naming real keys.
func (m *Meta) HasKeys() bool {
	for _, ks := range m.KeySpecs {
		if ks.Flags&KeyNotKey == 0 {
			return true
		}
	}
	return false
}

// goblinMeta describes Goblin's own commands.
var goblinMeta = []*Meta{
	{Name: "zcreate", Arity: -3, Group: "sorted_set", Flags: CmdWrite | CmdDenyOOM, Categories: CatSortedSet,
		KeySpecs: []KeySpec{{KeyOW | KeyUpdate, atIndex(1), keyRange(0, 1, 0)}}},
	{Name: "goblin", Arity: -2, Group: "server", Subs: []*Meta{
		{Name: "goblin|backup", Arity: 2, Flags: CmdAdmin | CmdNoScript},
		{Name: "goblin|digest", Arity: 2, Flags: CmdAdmin | CmdNoScript},
		{Name: "goblin|help", Arity: 2, Flags: CmdAdmin | CmdLoading | CmdStale},
		{Name: "goblin|nodes", Arity: 2, Flags: CmdAdmin | CmdNoScript | CmdLoading | CmdStale},
		{Name: "goblin|raftstats", Arity: 2, Flags: CmdAdmin | CmdNoScript | CmdLoading | CmdStale},
		{Name: "goblin|remove", Arity: 3, Flags: CmdAdmin | CmdNoScript | CmdLoading | CmdStale},
		{Name: "goblin|restore", Arity: -3, Flags: CmdAdmin | CmdNoScript},
		{Name: "goblin|transfer", Arity: -2, Flags: CmdAdmin | CmdNoScript | CmdLoading | CmdStale},
	}},
}

// The table is built as a package variable, before any init function
// registers a served command in it.
var (
	metaByID   []*Meta
	metaByName = buildMeta() // every command and subcommand by full name
)

func buildMeta() map[string]*Meta {
	byName := map[string]*Meta{}
	all := append(append([]*Meta(nil), redisMeta...), goblinMeta...)
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	for _, m := range all {
		addMeta(byName, m, nil)
	}
	return byName
}

func addMeta(metaByName map[string]*Meta, m, parent *Meta) {
	if _, dup := metaByName[m.Name]; dup {
		panic("command: metadata for " + m.Name + " given twice")
	}
	m.Parent = parent
	if parent != nil {
		m.Group = parent.Group
	}
	m.Categories = implicit(m.Flags, m.Categories)
	m.legacyRange()
	m.Doc = docFor(m.Name)
	m.ID = len(metaByID)
	metaByID = append(metaByID, m)
	metaByName[m.Name] = m
	for _, s := range m.Subs {
		addMeta(metaByName, s, m)
	}
}

// legacyRange computes the first/last/step COMMAND INFO reports and the
// movablekeys flag from the key specs, as Redis does.
func (m *Meta) legacyRange() {
	if len(m.KeySpecs) == 0 {
		return
	}
	plain := func(ks KeySpec) bool { return ks.Begin.Index > 0 && ks.Find.Range }
	if len(m.KeySpecs) == 1 && plain(m.KeySpecs[0]) {
		ks := m.KeySpecs[0]
		m.First, m.Step = ks.Begin.Index, ks.Find.KeyStep
		m.Last = ks.Find.LastKey
		if m.Last >= 0 {
			m.Last += m.First
		}
		if ks.Flags&KeyIncomplete != 0 {
			m.Flags |= CmdMovableKeys
		}
		return
	}
	first, last, prevLast := -1, uint32(0), uint32(0)
	for _, ks := range m.KeySpecs {
		if !plain(ks) || ks.Find.KeyStep != 1 || (prevLast != 0 && int(prevLast) != ks.Begin.Index-1) {
			m.Flags |= CmdMovableKeys
			continue
		}
		if ks.Flags&KeyIncomplete != 0 {
			m.Flags |= CmdMovableKeys
		}
		if first < 0 || ks.Begin.Index < first {
			first = ks.Begin.Index
		}
		abs := ks.Find.LastKey
		if abs >= 0 {
			abs += ks.Begin.Index
		}
		last = max(last, uint32(int32(abs))) // unsigned: a negative last wins
		prevLast = last
	}
	if first < 0 {
		m.Flags |= CmdMovableKeys
		return
	}
	m.First, m.Last, m.Step = first, int(int32(last)), 1
}

// MetaCount is the number of commands and subcommands described: IDs run
// from 0 to MetaCount-1.
func MetaCount() int { return len(metaByID) }

// MetaByID returns the metadata with ID id.
func MetaByID(id int) *Meta { return metaByID[id] }

// LookupMeta returns the metadata of the command or subcommand whose full
// name is name ("zadd", "config|get"; any case), or nil.
func LookupMeta(name string) *Meta { return metaByName[strings.ToLower(name)] }

// MetaFor returns the metadata of the command argv runs: for a container
// command, its subcommand's when argv names one.
func MetaFor(m *Meta, argv [][]byte) *Meta {
	if len(m.Subs) > 0 && len(argv) > 1 {
		if s := m.Sub(argv[1]); s != nil {
			return s
		}
	}
	return m
}

// MarkServed records that Goblin answers the command name and, for a
// container, the subcommands subs (all of them when subs is nil).
func MarkServed(name string, subs []string) {
	m := metaByName[name]
	if m == nil {
		panic("command: no metadata for served command " + name)
	}
	m.Served = true
	for _, s := range m.Subs {
		if subs == nil {
			s.Served = true
		}
	}
	for _, sub := range subs {
		s := metaByName[name+"|"+sub]
		if s == nil {
			panic("command: no metadata for served subcommand " + name + "|" + sub)
		}
		s.Served = true
	}
}

// AllMeta calls fn with every command (not subcommand), sorted by name.
func AllMeta(fn func(m *Meta)) {
	for _, m := range metaByID {
		if m.Parent == nil {
			fn(m)
		}
	}
}
