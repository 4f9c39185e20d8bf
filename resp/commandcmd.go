package resp

import (
	"strings"

	"github.com/goblindb/goblin/command"
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
	var subs []*command.Meta
	for _, sub := range m.Subs {
		if sub.Served {
			subs = append(subs, sub)
		}
	}
	if len(subs) == 0 {
		w.Set(0)
		return
	}
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

func cmdCommand(c *client, argv [][]byte) {
	if len(argv) == 1 {
		c.reply(writeAllInfo)
		return
	}
	sub := strings.ToLower(string(argv[1]))
	switch {
	case sub == "count" && len(argv) == 2:
		n := len(allCommands())
		c.reply(func(w *command.Writer) { w.Int(int64(n)) })
	case sub == "list" && len(argv) == 2:
		all := allCommands()
		c.reply(func(w *command.Writer) {
			w.Array(len(all))
			for _, m := range all {
				w.BulkString(m.Name)
			}
		})
	case sub == "info":
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
	case sub == "docs":
		names := argv[2:]
		var list []*command.Meta
		if len(names) == 0 {
			list = allCommands()
		} else {
			for _, n := range names {
				if m := findCommand(string(n)); m != nil {
					list = append(list, m)
				}
			}
		}
		c.reply(func(w *command.Writer) {
			w.Map(len(list))
			for _, m := range list {
				w.BulkString(m.Name)
				w.Map(2)
				w.BulkString("summary")
				w.BulkString(m.Name + " (see Redis's documentation)")
				w.BulkString("group")
				w.BulkString(m.Group)
			}
		})
	case sub == "getkeys" && len(argv) >= 3:
		spec := command.Lookup(argv[2])
		if spec == nil {
			c.replyError(command.Errorf("ERR Invalid command specified"))
			return
		}
		if !spec.CheckArity(len(argv) - 2) {
			c.replyError(command.Errorf("ERR Invalid number of arguments specified for command"))
			return
		}
		keys := spec.Keys(argv[2:])
		if len(keys) == 0 {
			c.replyError(command.Errorf("ERR The command has no key arguments"))
			return
		}
		c.reply(func(w *command.Writer) {
			w.Array(len(keys))
			for _, k := range keys {
				w.Bulk(k)
			}
		})
	default:
		c.replyError(command.UnknownSubcommandError(argv))
	}
}
