package command

// Documentation of the commands, as COMMAND DOCS gives it.
//
// The interface facts (since, doc flags, deprecation, the versions of a
// command's history, the argument tree) are Redis 7.2's, generated into
// redisdocs.go; the prose (summary, complexity, what each history version
// changed, what replaces a deprecated command) is Goblin's own wording,
// in doctext.go, for the commands Goblin serves.

// Doc is a command's or subcommand's documentation.
type Doc struct {
	Since           string
	DeprecatedSince string
	// Replaced: Redis names a replacement (Text.ReplacedBy words it);
	// HasComplexity: Redis states a complexity (Text.Complexity).
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
	History             []string // one per Doc.History version
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
// name, with Goblin's prose where it has some.
func docFor(name string) *Doc {
	d := redisDocs[name]
	if d == nil {
		d = goblinDocs[name]
	}
	if d == nil {
		d = &Doc{}
	}
	d.Text = docText[name]
	return d
}

// goblinDocs document Goblin's own commands.
var goblinDocs = map[string]*Doc{
	"zcreate": {Since: "1.0.0", HasComplexity: true, Args: []Arg{{Name: "key", Type: "key", HasKeySpec: true, KeySpec: 0},
		{Name: "layout", Type: "string"},
		{Name: "data", Type: "block", Optional: true, Multiple: true, Args: []Arg{{Name: "score", Type: "double"}, {Name: "member", Type: "string"}}}}},
	"goblin":           {Since: "1.0.0", HasComplexity: true},
	"goblin|backup":    {Since: "1.0.0", HasComplexity: true},
	"goblin|digest":    {Since: "1.0.0", HasComplexity: true},
	"goblin|help":      {Since: "1.0.0", HasComplexity: true},
	"goblin|nodes":     {Since: "1.0.0", HasComplexity: true},
	"goblin|raftstats": {Since: "1.0.0", HasComplexity: true},
	"goblin|remove":    {Since: "1.0.0", HasComplexity: true, Args: []Arg{{Name: "node-id", Type: "string"}}},
	"goblin|restore": {Since: "1.0.0", HasComplexity: true, Args: []Arg{{Name: "backup", Type: "string"},
		{Name: "force", Type: "pure-token", Token: "FORCE", Optional: true}}},
	"goblin|transfer": {Since: "1.0.0", HasComplexity: true, Args: []Arg{{Name: "node-id", Type: "string", Optional: true}}},
}
