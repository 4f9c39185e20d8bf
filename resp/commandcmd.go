package resp

import (
	"strings"

	"github.com/goblindb/goblin/command"
	"github.com/goblindb/goblin/keyspace"
)

// allCommands lists every command Goblin answers, sorted by name, with
// Redis's metadata (command.Meta).
func allCommands() []*command.Meta {
	var out []*command.Meta
	command.AllMeta(func(m *command.Meta) {
		if m.Served {
			out = append(out, m)
		}
	})
	return out
}

// findCommand returns a served command's metadata, or a served
// subcommand's ("config|get"), or nil.
func findCommand(name string) *command.Meta {
	if m := command.LookupMeta(name); m != nil && m.Served {
		return m
	}
	return nil
}

// writeInfo writes a command in COMMAND INFO's ten-field form.
func writeInfo(w *command.Writer, m *command.Meta) {
	w.Array(10)
	w.BulkString(m.Name)
	w.Int(int64(m.Arity))
	names := m.Flags.Names()
	w.Set(len(names))
	for _, n := range names {
		w.Simple(n)
	}
	w.Int(int64(m.First))
	w.Int(int64(m.Last))
	w.Int(int64(m.Step))
	cats := m.Categories.Names()
	w.Set(len(cats))
	for _, c := range cats {
		w.Simple("@" + c)
	}
	w.Set(len(m.Tips))
	for _, t := range m.Tips {
		w.BulkString(t)
	}
	w.Set(len(m.KeySpecs))
	for _, ks := range m.KeySpecs {
		writeKeySpec(w, ks)
	}
	if len(m.Subs) == 0 {
		w.Set(0)
		return
	}
	subs := servedSubs(m)
	w.Array(len(subs))
	for _, sub := range subs {
		writeInfo(w, sub)
	}
}

// writeAllInfo writes every command's COMMAND INFO entry.
func writeAllInfo(w *command.Writer) {
	all := allCommands()
	w.Array(len(all))
	for _, m := range all {
		writeInfo(w, m)
	}
}

// writeKeySpec writes a key spec as COMMAND INFO does.
func writeKeySpec(w *command.Writer, ks command.KeySpec) {
	w.Map(3)
	w.BulkString("flags")
	flags := ks.Flags.Names()
	w.Set(len(flags))
	for _, f := range flags {
		w.Simple(f)
	}
	w.BulkString("begin_search")
	w.Map(2)
	w.BulkString("type")
	switch {
	case ks.Begin.Index > 0:
		w.BulkString("index")
		w.BulkString("spec")
		w.Map(1)
		w.BulkString("index")
		w.Int(int64(ks.Begin.Index))
	case ks.Begin.Keyword != "":
		w.BulkString("keyword")
		w.BulkString("spec")
		w.Map(2)
		w.BulkString("keyword")
		w.BulkString(ks.Begin.Keyword)
		w.BulkString("startfrom")
		w.Int(int64(ks.Begin.StartFrom))
	default:
		w.BulkString("unknown")
		w.BulkString("spec")
		w.Map(0)
	}
	w.BulkString("find_keys")
	w.Map(2)
	w.BulkString("type")
	switch {
	case ks.Find.Range:
		w.BulkString("range")
		w.BulkString("spec")
		w.Map(3)
		w.BulkString("lastkey")
		w.Int(int64(ks.Find.LastKey))
		w.BulkString("keystep")
		w.Int(int64(ks.Find.KeyStep))
		w.BulkString("limit")
		w.Int(int64(ks.Find.Limit))
	case ks.Find.KeyNum:
		w.BulkString("keynum")
		w.BulkString("spec")
		w.Map(3)
		w.BulkString("keynumidx")
		w.Int(int64(ks.Find.NumIdx))
		w.BulkString("firstkey")
		w.Int(int64(ks.Find.First))
		w.BulkString("keystep")
		w.Int(int64(ks.Find.KeyStep))
	default:
		w.BulkString("unknown")
		w.BulkString("spec")
		w.Map(0)
	}
}

// servedSubs returns the subcommands of m Goblin answers.
func servedSubs(m *command.Meta) []*command.Meta {
	var subs []*command.Meta
	for _, sub := range m.Subs {
		if sub.Served {
			subs = append(subs, sub)
		}
	}
	return subs
}

// writeDocs writes a command's COMMAND DOCS entry.
func writeDocs(w *command.Writer, m *command.Meta) {
	d := m.Doc
	subs := servedSubs(m)
	n := 2 // summary, group
	for _, set := range []bool{d.Since != "", d.HasComplexity, len(d.DocFlags) > 0, d.DeprecatedSince != "",
		d.Replaced, len(d.History) > 0, len(d.Args) > 0, len(subs) > 0} {
		if set {
			n++
		}
	}
	w.Map(n)
	w.BulkString("summary")
	w.BulkString(d.Text.Summary)
	if d.Since != "" {
		w.BulkString("since")
		w.BulkString(d.Since)
	}
	w.BulkString("group")
	w.BulkString(strings.ReplaceAll(m.Group, "_", "-")) // as Redis names its groups here
	if d.HasComplexity {
		w.BulkString("complexity")
		w.BulkString(d.Text.Complexity)
	}
	if len(d.DocFlags) > 0 {
		w.BulkString("doc_flags")
		writeStatusSet(w, d.DocFlags)
	}
	if d.DeprecatedSince != "" {
		w.BulkString("deprecated_since")
		w.BulkString(d.DeprecatedSince)
	}
	if d.Replaced {
		w.BulkString("replaced_by")
		w.BulkString(d.Text.ReplacedBy)
	}
	if len(d.History) > 0 {
		w.BulkString("history")
		w.Set(len(d.History))
		for i, v := range d.History {
			w.Array(2)
			w.BulkString(v)
			text := ""
			if i < len(d.Text.History) {
				text = d.Text.History[i]
			}
			w.BulkString(text)
		}
	}
	if len(d.Args) > 0 {
		w.BulkString("arguments")
		writeArgs(w, d.Args)
	}
	if len(subs) > 0 {
		w.BulkString("subcommands")
		w.Map(len(subs))
		for _, sub := range subs {
			w.BulkString(sub.Name)
			writeDocs(w, sub)
		}
	}
}

// writeArgs writes an argument list as COMMAND DOCS does.
func writeArgs(w *command.Writer, args []command.Arg) {
	w.Array(len(args))
	for i := range args {
		a := &args[i]
		nested := a.Type == "oneof" || a.Type == "block"
		flags := a.Flags()
		n := 3 // name, type, and display_text or arguments
		for _, set := range []bool{a.HasKeySpec, a.Token != "", a.Since != "", a.DeprecatedSince != "", len(flags) > 0} {
			if set {
				n++
			}
		}
		w.Map(n)
		w.BulkString("name")
		w.BulkString(a.Name)
		w.BulkString("type")
		w.BulkString(a.Type)
		if !nested {
			w.BulkString("display_text")
			w.BulkString(a.DisplayText())
		}
		if a.HasKeySpec {
			w.BulkString("key_spec_index")
			w.Int(int64(a.KeySpec))
		}
		if a.Token != "" {
			w.BulkString("token")
			w.BulkString(a.Token)
		}
		if a.Since != "" {
			w.BulkString("since")
			w.BulkString(a.Since)
		}
		if a.DeprecatedSince != "" {
			w.BulkString("deprecated_since")
			w.BulkString(a.DeprecatedSince)
		}
		if len(flags) > 0 {
			w.BulkString("flags")
			writeStatusSet(w, flags)
		}
		if nested {
			w.BulkString("arguments")
			writeArgs(w, a.Args)
		}
	}
}

// writeStatusSet writes names as a set of simple strings, as Redis
// writes flags.
func writeStatusSet(w *command.Writer, names []string) {
	w.Set(len(names))
	for _, n := range names {
		w.Simple(n)
	}
}

func cmdCommand(c *client, argv [][]byte) {
	if len(argv) == 1 {
		c.reply(writeAllInfo)
		return
	}
	sub := strings.ToLower(string(argv[1]))
	switch sub {
	case "count":
		n := len(allCommands())
		c.reply(func(w *command.Writer) { w.Int(int64(n)) })
	case "list":
		commandList(c, argv)
	case "info":
		names := argv[2:]
		if len(names) == 0 {
			c.reply(writeAllInfo)
			return
		}
		c.reply(func(w *command.Writer) {
			w.Array(len(names))
			for _, n := range names {
				if m := findCommand(string(n)); m != nil {
					writeInfo(w, m)
				} else {
					w.Null()
				}
			}
		})
	case "docs":
		var list []*command.Meta
		if len(argv) == 2 {
			list = allCommands()
		} else {
			for _, n := range argv[2:] {
				if m := findCommand(string(n)); m != nil {
					list = append(list, m)
				}
			}
		}
		c.reply(func(w *command.Writer) {
			w.Map(len(list))
			for _, m := range list {
				w.BulkString(m.Name)
				writeDocs(w, m)
			}
		})
	case "getkeys", "getkeysandflags":
		commandGetKeys(c, argv, sub == "getkeysandflags")
	case "help":
		c.reply(func(w *command.Writer) {
			command.WriteHelp(w, argv[0], []string{
				"(no subcommand)", "    Return details about all commands.",
				"COUNT", "    Return the total number of commands in this server.",
				"LIST", "    Return a list of all commands in this server.",
				"INFO [<command-name> ...]", "    Return details about multiple commands.",
				"    If no command names are given, documentation details for all",
				"    commands are returned.",
				"DOCS [<command-name> ...]", "    Return documentation details about multiple commands.",
				"    If no command names are given, documentation details for all",
				"    commands are returned.",
				"GETKEYS <full-command>", "    Return the keys from a full command.",
				"GETKEYSANDFLAGS <full-command>", "    Return the keys and the access flags from a full command.",
			})
		})
	default:
		c.replyError(command.UnknownSubcommandError(argv))
	}
}

// commandList answers COMMAND LIST [FILTERBY MODULE|ACLCAT|PATTERN arg]:
// commands and subcommands by full name.
func commandList(c *client, argv [][]byte) {
	match := func(*command.Meta) bool { return true }
	for i := 2; i < len(argv); i += 3 {
		if !strings.EqualFold(string(argv[i]), "filterby") || len(argv)-1-i != 2 {
			c.replyError(command.ErrSyntax)
			return
		}
		arg := argv[i+2]
		switch strings.ToLower(string(argv[i+1])) {
		case "module":
			match = func(*command.Meta) bool { return false } // no modules
		case "aclcat":
			cat := command.CategoryByName(string(arg))
			match = func(m *command.Meta) bool { return cat != 0 && m.Categories&cat != 0 }
		case "pattern":
			match = func(m *command.Meta) bool { return keyspace.Match(arg, []byte(m.Name), true) }
		default:
			c.replyError(command.ErrSyntax)
			return
		}
	}
	var names []string
	for _, m := range allCommands() {
		if match(m) {
			names = append(names, m.Name)
		}
		for _, sub := range servedSubs(m) {
			if match(sub) {
				names = append(names, sub.Name)
			}
		}
	}
	c.reply(func(w *command.Writer) {
		w.Array(len(names))
		for _, n := range names {
			w.BulkString(n)
		}
	})
}

// commandGetKeys answers COMMAND GETKEYS and GETKEYSANDFLAGS from the
// command's key specs, as Redis finds keys.
func commandGetKeys(c *client, argv [][]byte, withFlags bool) {
	full := argv[2:]
	m := findCommand(string(full[0]))
	if m != nil && strings.Contains(m.Name, "|") {
		m = nil // a subcommand is named by its arguments
	}
	if m != nil {
		m = command.MetaFor(m, full)
	}
	switch {
	case m == nil:
		c.replyError(command.Errorf("ERR Invalid command specified"))
		return
	case !m.HasKeys() && m.Flags&command.CmdMovableKeys == 0:
		c.replyError(command.Errorf("ERR The command has no key arguments"))
		return
	case (m.Arity > 0 && m.Arity != len(full)) || len(full) < -m.Arity:
		c.replyError(command.Errorf("ERR Invalid number of arguments specified for command"))
		return
	}
	refs := m.KeyRefs(full, nil)
	if len(refs) == 0 {
		if m.Flags&command.CmdNoMandatoryKeys != 0 {
			c.reply(func(w *command.Writer) { w.Array(0) })
		} else {
			c.replyError(command.Errorf("ERR Invalid arguments specified for command"))
		}
		return
	}
	c.reply(func(w *command.Writer) {
		w.Array(len(refs))
		for _, r := range refs {
			if !withFlags {
				w.Bulk(full[r.Pos])
				continue
			}
			w.Array(2)
			w.Bulk(full[r.Pos])
			writeStatusSet(w, r.Flags.Names())
		}
	})
}
