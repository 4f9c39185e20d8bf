package resp

import (
	"bytes"
	"os"
	"strings"
	"time"

	"github.com/goblindb/goblin/acl"
	"github.com/goblindb/goblin/command"
	"github.com/goblindb/goblin/internal/durable"
	"github.com/goblindb/goblin/raftfsm"
)

// The ACL command. SETUSER, DELUSER and LOAD change the replicated users
// (an OpACL entry, validated here first); the rest read this node's view
// of them. ACL LOG is this node's own.

func cmdACL(c *client, argv [][]byte) {
	sub := strings.ToLower(string(argv[1]))
	n := len(argv)
	switch {
	case sub == "setuser" && n >= 3:
		aclSetUser(c, argv)
	case sub == "deluser" && n >= 3:
		aclDelUser(c, argv)
	case sub == "getuser" && n == 3:
		aclGetUser(c, string(argv[2]))
	case (sub == "list" || sub == "users") && n == 2:
		users := c.s.users().All()
		c.reply(func(w *command.Writer) {
			w.Array(len(users))
			for _, u := range users {
				if sub == "users" {
					w.BulkString(u.Name())
				} else {
					w.BulkString(u.Line())
				}
			}
		})
	case sub == "whoami" && n == 2:
		name := c.acl.user.Name()
		c.reply(func(w *command.Writer) { w.BulkString(name) })
	case c.s.acl.op.File == "" && (sub == "load" || sub == "save"):
		c.replyError(command.Errorf("ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration."))
	case sub == "load" && n == 2:
		aclLoad(c)
	case sub == "save" && n == 2:
		aclSave(c)
	case sub == "cat" && n == 2:
		names := command.CategoryNames()
		c.reply(func(w *command.Writer) {
			w.Array(len(names))
			for _, n := range names {
				w.BulkString(n)
			}
		})
	case sub == "cat" && n == 3:
		aclCat(c, argv[2])
	case sub == "genpass" && (n == 2 || n == 3):
		bits := int64(256)
		if n == 3 {
			v, ok := command.ParseInt(argv[2])
			if !ok {
				c.replyError(command.ErrNotInteger)
				return
			}
			bits = v
		}
		if bits <= 0 || bits > acl.GenPassMaxBits {
			c.replyError(command.Errorf("ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to %d", acl.GenPassMaxBits))
			return
		}
		pass := acl.GenPass(int(bits))
		c.reply(func(w *command.Writer) { w.BulkString(pass) })
	case sub == "log" && (n == 2 || n == 3):
		aclLog(c, argv)
	case sub == "dryrun" && n >= 4:
		aclDryRun(c, argv)
	case sub == "help" && n == 2:
		c.reply(func(w *command.Writer) { command.WriteHelp(w, argv[0], aclHelp) })
	default:
		c.replyError(command.Errorf("ERR unknown subcommand or wrong number of arguments for '%s'. Try %s HELP.",
			trunc128(argv[1]), bytes.ToUpper(argv[0])))
	}
}

var aclHelp = []string{
	"CAT [<category>]",
	"    List all commands that belong to <category>, or all command categories",
	"    when no category is specified.",
	"DELUSER <username> [<username> ...]",
	"    Delete a list of users.",
	"DRYRUN <username> <command> [<arg> ...]",
	"    Returns whether the user can execute the given command without executing the command.",
	"GETUSER <username>",
	"    Get the user's details.",
	"GENPASS [<bits>]",
	"    Generate a secure 256-bit user password. The optional `bits` argument can",
	"    be used to specify a different size.",
	"LIST",
	"    Show users details in config file format.",
	"LOAD",
	"    Reload users from the ACL file.",
	"LOG [<count> | RESET]",
	"    Show the ACL log entries.",
	"SAVE",
	"    Save the current config to the ACL file.",
	"SETUSER <username> <attribute> [<attribute> ...]",
	"    Create or modify a user with the specified attributes.",
	"USERS",
	"    List all the registered usernames.",
	"WHOAMI",
	"    Return the current connection username.",
}

// trunc128 is C's "%.128s" of an argument.
func trunc128(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	if len(b) > 128 {
		b = b[:128]
	}
	return b
}

// sendACLReply sends the reply of an applied ACL entry, or the error.
func (c *client) sendACLReply(reply []byte, err error) {
	if err != nil {
		c.replyError(translate(err))
		return
	}
	c.reply(func(w *command.Writer) { w.Raw(reply) })
}

func aclSetUser(c *client, argv [][]byte) {
	name := string(argv[2])
	if !acl.ValidUsername(name) {
		c.replyError(command.Errorf("ERR %s", acl.ErrBadUsername))
		return
	}
	rules := make([]string, len(argv)-3)
	for i, a := range argv[3:] {
		rules[i] = string(a)
	}
	// Refuse here what this node's copy refuses: a bad rule never
	// reaches the log.
	if _, err := acl.SetUser(c.s.users().Get(name), name, rules); err != nil {
		c.replyError(err)
		return
	}
	c.sendACLReply(c.s.proposeACL(&raftfsm.ACLChange{Kind: raftfsm.ACLSetUser,
		Users: []raftfsm.ACLUser{{Name: name, Rules: acl.HashRules(rules)}}}))
}

func aclDelUser(c *client, argv [][]byte) {
	change := &raftfsm.ACLChange{Kind: raftfsm.ACLDelUser}
	for _, a := range argv[2:] {
		if string(a) == acl.DefaultUser {
			c.replyError(command.Errorf("ERR %s", acl.ErrDeleteDefault))
			return
		}
		change.Users = append(change.Users, raftfsm.ACLUser{Name: string(a)})
	}
	c.sendACLReply(c.s.proposeACL(change))
}

func aclGetUser(c *client, name string) {
	u := c.s.users().Get(name)
	c.reply(func(w *command.Writer) {
		if u == nil {
			w.Null()
			return
		}
		w.Map(6)
		w.BulkString("flags")
		flags := u.Flags()
		w.Set(len(flags))
		for _, f := range flags {
			w.BulkString(f)
		}
		w.BulkString("passwords")
		pw := u.Passwords()
		w.Array(len(pw))
		for _, p := range pw {
			w.BulkString(p)
		}
		writeSelector(w, u.Root())
		w.BulkString("selectors")
		sels := u.Selectors()
		w.Array(len(sels))
		for _, s := range sels {
			w.Map(3)
			writeSelector(w, s)
		}
	})
}

func writeSelector(w *command.Writer, s acl.SelectorInfo) {
	w.BulkString("commands")
	w.BulkString(s.Commands)
	w.BulkString("keys")
	w.BulkString(s.Keys)
	w.BulkString("channels")
	w.BulkString(s.Channels)
}

// aclCat lists the served commands and subcommands of a category.
func aclCat(c *client, name []byte) {
	cat := command.CategoryByName(string(name))
	if cat == 0 {
		c.replyError(command.Errorf("ERR Unknown category '%s'", trunc128(name)))
		return
	}
	var names []string
	var walk func(m *command.Meta)
	walk = func(m *command.Meta) {
		if !m.Served {
			return
		}
		if m.Categories&cat != 0 {
			names = append(names, m.Name)
		}
		for _, s := range m.Subs {
			walk(s)
		}
	}
	command.AllMeta(walk)
	c.reply(func(w *command.Writer) {
		w.Array(len(names))
		for _, n := range names {
			w.BulkString(n)
		}
	})
}

func aclLog(c *client, argv [][]byte) {
	count := int64(10)
	if len(argv) == 3 {
		if strings.EqualFold(string(argv[2]), "reset") {
			c.s.acl.log.Reset()
			c.reply(func(w *command.Writer) { w.OK() })
			return
		}
		v, ok := command.ParseInt(argv[2])
		if !ok {
			c.replyError(command.ErrNotInteger)
			return
		}
		count = max(v, 0)
	}
	entries := c.s.acl.log.Entries(int(min(count, 1<<30)))
	now := time.Now().UnixMilli()
	c.reply(func(w *command.Writer) {
		w.Array(len(entries))
		for _, e := range entries {
			w.Map(10)
			w.BulkString("count")
			w.Int(e.Count)
			w.BulkString("reason")
			w.BulkString(e.Reason.String())
			w.BulkString("context")
			w.BulkString(e.Context.String())
			w.BulkString("object")
			w.BulkString(e.Object)
			w.BulkString("username")
			w.BulkString(e.Username)
			w.BulkString("age-seconds")
			w.Double(float64(now-e.Updated) / 1000)
			w.BulkString("client-info")
			w.BulkString(e.ClientInfo)
			w.BulkString("entry-id")
			w.Int(e.ID)
			w.BulkString("timestamp-created")
			w.Int(e.Created)
			w.BulkString("timestamp-last-updated")
			w.Int(e.Updated)
		}
	})
}

// aclDryRun checks whether a user may run a command, without running it.
func aclDryRun(c *client, argv [][]byte) {
	u := c.s.users().Get(string(argv[2]))
	if u == nil {
		c.replyError(command.Errorf("ERR User '%s' not found", cstr(argv[2])))
		return
	}
	cmd := argv[3:]
	m := command.LookupMeta(string(cmd[0]))
	if m != nil && len(m.Subs) > 0 && len(cmd) > 1 {
		m = m.Sub(cmd[1])
	}
	if m == nil || !m.Served {
		c.replyError(command.Errorf("ERR Command '%s' not found", cstr(argv[3])))
		return
	}
	if (m.Arity > 0 && m.Arity != len(cmd)) || len(cmd) < -m.Arity {
		c.replyError(command.ArityError(m.Name))
		return
	}
	var keys []command.KeyRef
	reason, pos := u.Check(m, cmd, &keys)
	if reason == acl.Allowed {
		c.reply(func(w *command.Writer) { w.OK() })
		return
	}
	msg := acl.DenialMessage(reason, u.Name(), m.Name, string(cmd[pos]), true)
	c.reply(func(w *command.Writer) { w.BulkString(msg) })
}

// cstr is b up to its first NUL byte, as C prints it.
func cstr(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

// aclLoad reads this node's aclfile and, if it is valid, replaces every
// user with its users, on every node.
func aclLoad(c *client) {
	op := c.s.acl.op
	data, err := os.ReadFile(op.File)
	if err != nil {
		c.replyError(acl.OpenError(op.File, err))
		return
	}
	users, _, err := acl.ParseFile(op.File, data)
	if err != nil {
		c.replyError(err)
		return
	}
	change := &raftfsm.ACLChange{Kind: raftfsm.ACLLoad, Users: fileUsers(users)}
	if op.Change != nil {
		// This node's configuration now is what it loaded: its next
		// start does not apply the file again over later changes.
		change.Node = op.Change.Node
		change.Digest = digestOf(&raftfsm.ACLChange{Kind: raftfsm.ACLConfig, Replace: true, Users: change.Users})
	}
	c.sendACLReply(c.s.proposeACL(change))
}

// aclSave writes the users in force to this node's aclfile: a temporary
// file, synced, renamed over the file, and the directory synced.
func aclSave(c *client) {
	op := c.s.acl.op
	content := acl.FileContent(c.s.users())
	if err := durable.ReplaceFile(op.File, content, 0o644); err != nil {
		if op.Warn != nil {
			op.Warn("ACL SAVE failed", "file", op.File, "error", err)
		}
		c.replyError(command.Errorf("ERR There was an error trying to save the ACLs. Please check the server logs for more information"))
		return
	}
	if op.Change != nil {
		// Record the file as this node's configuration, so its next start
		// does not apply it again over later changes.
		if users, _, err := acl.ParseFile(op.File, content); err == nil {
			d := digestOf(&raftfsm.ACLChange{Kind: raftfsm.ACLConfig, Replace: true, Users: fileUsers(users)})
			c.s.proposeACL(&raftfsm.ACLChange{Kind: raftfsm.ACLConfig, Node: op.Change.Node, Digest: d})
		}
	}
	c.reply(func(w *command.Writer) { w.OK() })
}
