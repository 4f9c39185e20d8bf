package command

// Documentation of the commands, as COMMAND DOCS gives it.
//
// For Redis's commands it is Redis 7.2's, generated from its command files
// into redisdocs.go: the summary, complexity, history and replacement texts
// are reply data, carried over unchanged like Redis's error texts, so that
// COMMAND DOCS answers byte for byte as Redis does; so are since, the doc
// flags, the deprecation and the argument tree. Goblin's own commands
// (ZCREATE, GOBLIN) are documented here, in Goblin's words.

// Doc is a command's or subcommand's documentation.
type Doc struct {
	Since           string
	DeprecatedSince string
	// Replaced: the command names a replacement (Text.ReplacedBy);
	// HasComplexity: it states a complexity (Text.Complexity).
	Replaced      bool
	HasComplexity bool
	DocFlags      []string // "deprecated", "syscmd"
	History       []string // the versions that changed the command, oldest first
	Args          []Arg
	Text          DocText
}

// DocText is the prose of a command's documentation.
type DocText struct {
	Summary, Complexity string
	History             []string // what each Doc.History version changed
	ReplacedBy          string
}

// Arg is one argument of a command, as COMMAND DOCS describes it.
type Arg struct {
	Name    string
	Type    string // "key", "string", "integer", "double", "pattern", "unix-time", "pure-token", "oneof", "block"
	Display string // the display text; Name when empty
	// KeySpec is the index of the key spec that finds the argument, when
	// HasKeySpec.
	HasKeySpec      bool
	KeySpec         int
	Token           string
	Since           string
	DeprecatedSince string
	Optional        bool
	Multiple        bool
	MultipleToken   bool
	Args            []Arg // a oneof's or block's arguments
}

// Flags returns the argument's flags as COMMAND DOCS names them.
func (a *Arg) Flags() []string {
	var out []string
	if a.Optional {
		out = append(out, "optional")
	}
	if a.Multiple {
		out = append(out, "multiple")
	}
	if a.MultipleToken {
		out = append(out, "multiple_token")
	}
	return out
}

// DisplayText is what COMMAND DOCS shows for the argument.
func (a *Arg) DisplayText() string {
	if a.Display != "" {
		return a.Display
	}
	return a.Name
}

// docFor returns the documentation of the command or subcommand named
// name.
func docFor(name string) *Doc {
	if d := redisDocs[name]; d != nil {
		return d
	}
	if d := goblinDocs[name]; d != nil {
		return d
	}
	return &Doc{}
}

// goblinDocs document Goblin's own commands.
var goblinDocs = map[string]*Doc{
	"zcreate": {Since: "1.0.0", HasComplexity: true, Args: []Arg{{Name: "key", Type: "key", HasKeySpec: true, KeySpec: 0},
		{Name: "layout", Type: "string"},
		{Name: "data", Type: "block", Optional: true, Multiple: true, Args: []Arg{{Name: "score", Type: "double"}, {Name: "member", Type: "string"}}}},
		Text: DocText{Summary: "Creates a packed sorted set with a layout, optionally with members.", Complexity: "O(M*log(N)), M members added."}},
	"goblin": {Since: "1.0.0", HasComplexity: true,
		Text: DocText{Summary: "Commands about the Goblin cluster.", Complexity: "Depends on the subcommand."}},
	"goblin|backup": {Since: "1.0.0", HasComplexity: true,
		Text: DocText{Summary: "Returns a backup of the state as one bulk string.", Complexity: "O(N), N members in all keys."}},
	"goblin|digest": {Since: "1.0.0", HasComplexity: true,
		Text: DocText{Summary: "Returns the applied log index and a digest of the state.", Complexity: "O(N), N members in all keys."}},
	"goblin|help": {Since: "1.0.0", HasComplexity: true,
		Text: DocText{Summary: "Describes the GOBLIN subcommands.", Complexity: "O(1)."}},
	"goblin|nodes": {Since: "1.0.0", HasComplexity: true,
		Text: DocText{Summary: "Describes the nodes, their roles and progress.", Complexity: "O(N), N nodes."}},
	"goblin|raftstats": {Since: "1.0.0", HasComplexity: true,
		Text: DocText{Summary: "Returns the Raft library's statistics.", Complexity: "O(1)."}},
	"goblin|remove": {Since: "1.0.0", HasComplexity: true, Args: []Arg{{Name: "node-id", Type: "string"}},
		Text: DocText{Summary: "Removes a node from the Raft configuration.", Complexity: "O(1)."}},
	"goblin|restore": {Since: "1.0.0", HasComplexity: true, Args: []Arg{{Name: "backup", Type: "string"},
		{Name: "force", Type: "pure-token", Token: "FORCE", Optional: true}},
		Text: DocText{Summary: "Replaces the state with a backup.", Complexity: "O(N), N members in the backup."}},
	"goblin|transfer": {Since: "1.0.0", HasComplexity: true, Args: []Arg{{Name: "node-id", Type: "string", Optional: true}},
		Text: DocText{Summary: "Hands leadership to a voter.", Complexity: "O(1)."}},
}
