package resp

import (
	"sort"
	"strings"

	"github.com/goblindb/goblin/command"
)

// commandInfo is one entry of COMMAND's table.
type commandInfo struct {
	name              string
	arity             int
	flags             command.Flags
	first, last, step int
	group             string
}

// allCommands lists every command Goblin answers, sorted by name.
func allCommands() []commandInfo {
	seen := map[string]bool{}
	var out []commandInfo
	for _, cc := range connCommands {
		seen[cc.name] = true
		out = append(out, commandInfo{name: cc.name, arity: cc.arity, flags: cc.flags, group: cc.group})
	}
	for _, s := range command.All() {
		if seen[s.Name] {
			continue
		}
		out = append(out, commandInfo{name: s.Name, arity: s.Arity, flags: s.Flags, first: s.FirstKey, last: s.LastKey, step: s.Step, group: s.Group})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func findCommand(name string) (commandInfo, bool) {
	for _, ci := range allCommands() {
		if ci.name == strings.ToLower(name) {
			return ci, true
		}
	}
	return commandInfo{}, false
}

// writeInfo writes a command in COMMAND INFO's ten-field form.
func writeInfo(w *command.Writer, ci commandInfo) {
	w.Array(10)
	w.BulkString(ci.name)
	w.Int(int64(ci.arity))
	names := ci.flags.Names()
	w.Set(len(names))
	for _, n := range names {
		w.Simple(n)
	}
	w.Int(int64(ci.first))
	w.Int(int64(ci.last))
	w.Int(int64(ci.step))
	w.Set(1)
	w.Simple("@" + strings.ReplaceAll(ci.group, "_", ""))
	w.Set(0) // tips
	if ci.first == 0 {
		w.Array(0) // key specs
	} else {
		writeKeySpec(w, ci)
	}
	w.Array(0) // subcommands
}

// writeAllInfo writes every command's COMMAND INFO entry.
func writeAllInfo(w *command.Writer) {
	all := allCommands()
	w.Array(len(all))
	for _, ci := range all {
		writeInfo(w, ci)
	}
}

// writeKeySpec describes the key positions as one range key spec.
func writeKeySpec(w *command.Writer, ci commandInfo) {
	w.Array(1)
	w.Map(3)
	w.BulkString("flags")
	w.Set(0)
	w.BulkString("begin_search")
	w.Map(2)
	w.BulkString("type")
	w.BulkString("index")
	w.BulkString("spec")
	w.Map(1)
	w.BulkString("index")
	w.Int(int64(ci.first))
	w.BulkString("find_keys")
	w.Map(2)
	w.BulkString("type")
	w.BulkString("range")
	w.BulkString("spec")
	w.Map(3)
	last := ci.last
	if last > 0 {
		last -= ci.first
	}
	w.BulkString("lastkey")
	w.Int(int64(last))
	w.BulkString("keystep")
	w.Int(int64(ci.step))
	w.BulkString("limit")
	w.Int(0)
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
			for _, ci := range all {
				w.BulkString(ci.name)
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
				if ci, ok := findCommand(string(n)); ok {
					writeInfo(w, ci)
				} else {
					w.NullArray()
				}
			}
		})
	case sub == "docs":
		names := argv[2:]
		var list []commandInfo
		if len(names) == 0 {
			list = allCommands()
		} else {
			for _, n := range names {
				if ci, ok := findCommand(string(n)); ok {
					list = append(list, ci)
				}
			}
		}
		c.reply(func(w *command.Writer) {
			w.Map(len(list))
			for _, ci := range list {
				w.BulkString(ci.name)
				w.Map(2)
				w.BulkString("summary")
				w.BulkString(ci.name + " (see Redis's documentation)")
				w.BulkString("group")
				w.BulkString(ci.group)
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
