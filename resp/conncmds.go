package resp

import (
	"sort"
	"strings"

	"github.com/goblindb/goblin/acl"
	"github.com/goblindb/goblin/command"
)

// connCommand is a command the edge answers itself.
type connCommand struct {
	name  string
	arity int
	run   func(c *client, argv [][]byte)
	// noAuth: allowed before AUTH.
	noAuth bool
	// inMulti says what happens inside MULTI: runNow (the transaction
	// commands themselves), queue (the state machine runs it at EXEC),
	// atExec (the edge runs it at EXEC), or refuse.
	inMulti multiMode
	flags   command.Flags
	group   string
	// sub, for container commands, gives each subcommand's arity
	// (counting the command name), checked before the command runs or is
	// queued, as Redis checks them.
	sub map[string]int
	// meta is the command's Redis metadata (categories, key specs).
	meta *command.Meta
}

type multiMode uint8

const (
	refuse multiMode = iota
	runNow
	queue  // the state machine runs it at EXEC
	atExec // the edge runs it once EXEC's entry is applied (see cmdExec)
)

var connCommands = map[string]*connCommand{}

func init() {
	for _, cc := range []*connCommand{
		{name: "ping", arity: -1, run: cmdPing, inMulti: queue, flags: command.Fast, group: "connection"},
		{name: "echo", arity: 2, run: cmdEcho, inMulti: queue, flags: command.Fast, group: "connection"},
		{name: "select", arity: 2, run: cmdSelect, inMulti: queue, flags: command.Fast, group: "connection"},
		{name: "quit", arity: -1, run: cmdQuit, noAuth: true, inMulti: runNow, flags: command.Fast, group: "connection"},
		{name: "hello", arity: -1, run: cmdHello, noAuth: true, flags: command.Fast, group: "connection"},
		{name: "auth", arity: -2, run: cmdAuth, inMulti: atExec, noAuth: true, flags: command.Fast, group: "connection"},
		{name: "client", arity: -2, run: cmdClient, inMulti: atExec, group: "connection"},
		{name: "multi", arity: 1, run: cmdMulti, inMulti: runNow, flags: command.Fast, group: "transactions"},
		{name: "exec", arity: 1, run: cmdExec, inMulti: runNow, group: "transactions"},
		{name: "discard", arity: 1, run: cmdDiscard, inMulti: runNow, flags: command.Fast, group: "transactions"},
		{name: "watch", arity: -2, run: cmdWatch, inMulti: runNow, flags: command.Fast, group: "transactions"},
		{name: "unwatch", arity: 1, run: cmdUnwatch, inMulti: queue, flags: command.Fast, group: "transactions"},
		{name: "info", arity: -1, run: cmdInfo, inMulti: atExec, group: "server"},
		{name: "command", arity: -1, run: cmdCommand, inMulti: atExec, group: "server"},
		{name: "config", arity: -2, run: cmdConfig, inMulti: atExec, group: "server"},
		{name: "readonly", arity: 1, run: cmdReadonly, inMulti: atExec, flags: command.Fast, group: "cluster"},
		{name: "readwrite", arity: 1, run: cmdReadwrite, inMulti: atExec, flags: command.Fast, group: "cluster"},
		{name: "role", arity: 1, run: cmdRole, inMulti: atExec, flags: command.Fast, group: "server"},
		{name: "cluster", arity: -2, run: cmdCluster, inMulti: atExec, group: "cluster"},
		{name: "goblin", arity: -2, run: cmdGoblin, flags: command.Admin, group: "server"},
		{name: "acl", arity: -2, run: cmdACL, inMulti: atExec, group: "server"},
	} {
		connCommands[cc.name] = cc
	}
	connCommands["client"].sub = map[string]int{"id": 2, "getname": 2, "setname": 3, "setinfo": 4, "info": 2, "list": -2,
		"no-evict": 3, "no-touch": 3, "reply": 3, "unblock": -3, "help": 2}
	connCommands["command"].sub = subArities("command")
	connCommands["config"].sub = configSubs
	connCommands["acl"].sub = subArities("acl")
	for _, cc := range connCommands {
		cc.meta = command.LookupMeta(cc.name)
		var subs []string
		for sub := range cc.sub {
			subs = append(subs, sub)
		}
		switch cc.name {
		case "cluster":
			subs = clusterSubs
		case "goblin", "acl":
			subs = nil // every subcommand
		}
		sort.Strings(subs)
		command.MarkServed(cc.name, subs)
	}
}

// subArities returns the arity of each of a container's subcommands, from
// Redis's metadata.
func subArities(name string) map[string]int {
	out := map[string]int{}
	for _, s := range command.LookupMeta(name).Subs {
		out[s.SubName()] = s.Arity
	}
	return out
}

// checkSub checks a container command's subcommand and its arity.
func (cc *connCommand) checkSub(argv [][]byte) error {
	return command.CheckSubcommand(cc.name, cc.sub, argv)
}

func lookupConnCommand(name []byte) *connCommand {
	if len(name) > 16 {
		return nil
	}
	var tmp [16]byte
	for i, c := range name {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		tmp[i] = c
	}
	return connCommands[string(tmp[:len(name)])]
}

func cmdPing(c *client, argv [][]byte) {
	c.reply(func(w *command.Writer) {
		switch len(argv) {
		case 1:
			w.Simple("PONG")
		case 2:
			w.Bulk(argv[1])
		default:
			w.Error(command.ArityError("ping"))
		}
	})
}

func cmdEcho(c *client, argv [][]byte) { c.reply(func(w *command.Writer) { w.Bulk(argv[1]) }) }

func cmdQuit(c *client, argv [][]byte) {
	c.reply(func(w *command.Writer) { w.OK() })
	c.quit = true // the connection closes once the reply is written
}

func cmdSelect(c *client, argv [][]byte) {
	db, err := command.ParseDB(argv[1])
	if err != nil {
		c.replyError(err)
		return
	}
	c.db = db
	c.reply(func(w *command.Writer) { w.OK() })
}

func cmdReadonly(c *client, argv [][]byte) {
	c.readonly = true
	c.reply(func(w *command.Writer) { w.OK() })
}

func cmdReadwrite(c *client, argv [][]byte) {
	c.readonly = false
	c.reply(func(w *command.Writer) { w.OK() })
}

func cmdAuth(c *client, argv [][]byte) {
	var err error
	switch len(argv) {
	case 2:
		// AUTH <password> is the default user's, and an error when it
		// has no password, as in Redis.
		if c.s.users().Default().NoPass() {
			err = errNoPassword
		} else {
			err = c.authenticate(argv[0], []byte(acl.DefaultUser), argv[1])
		}
	case 3:
		err = c.authenticate(argv[0], argv[1], argv[2])
	default:
		err = command.ErrSyntax
	}
	if err != nil {
		c.replyError(err)
		return
	}
	c.reply(func(w *command.Writer) { w.OK() })
}

// validClientAttr reports whether s has only printable non-space ASCII, as
// Redis requires of client names and library attributes.
func validClientAttr(s []byte) bool {
	for _, b := range s {
		if b < '!' || b > '~' {
			return false
		}
	}
	return true
}

var errClientName = command.Errorf("ERR Client names cannot contain spaces, newlines or special characters.")

func cmdHello(c *client, argv [][]byte) {
	ver := int64(0)
	next := 1
	if len(argv) >= 2 {
		v, ok := parseLongLong(argv[1])
		if !ok {
			c.replyError(command.Errorf("ERR Protocol version is not an integer or out of range"))
			return
		}
		if v < 2 || v > 3 {
			c.replyError(command.Errorf("NOPROTO unsupported protocol version"))
			return
		}
		ver = v
		next = 2
	}
	var user, pass, name []byte
	setName := false
	for j := next; j < len(argv); j++ {
		more := len(argv) - 1 - j
		switch {
		case strings.EqualFold(string(argv[j]), "auth") && more >= 2:
			user, pass = argv[j+1], argv[j+2]
			j += 2
		case strings.EqualFold(string(argv[j]), "setname") && more >= 1:
			name = argv[j+1]
			if !validClientAttr(name) {
				c.replyError(errClientName)
				return
			}
			setName = true
			j++
		default:
			c.replyError(command.Errorf("ERR Syntax error in HELLO option '%s'", argv[j]))
			return
		}
	}
	if user != nil {
		if err := c.authenticate(argv[0], user, pass); err != nil {
			c.replyError(err)
			return
		}
	}
	if !c.acl.authed {
		c.replyError(command.Errorf("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"))
		return
	}
	if setName {
		c.name = string(name)
	}
	if ver != 0 {
		c.proto = int(ver)
	}
	st := c.s.backend.Status()
	c.reply(func(w *command.Writer) {
		w.Map(7)
		w.BulkString("server")
		w.BulkString("redis")
		w.BulkString("version")
		w.BulkString(c.s.cfg.Version)
		w.BulkString("proto")
		w.Int(int64(c.proto))
		w.BulkString("id")
		w.Int(c.id)
		w.BulkString("mode")
		w.BulkString("standalone")
		w.BulkString("role")
		w.BulkString(st.Role)
		w.BulkString("modules")
		w.Array(0)
	})
}

// parseLongLong is Redis's string2ll on a command argument.
func parseLongLong(b []byte) (int64, bool) { return command.ParseInt(b) }
