package resp

import (
	"strconv"
	"strings"
	"time"

	"github.com/goblindb/goblin/acl"
	"github.com/goblindb/goblin/command"
	"github.com/goblindb/goblin/node"
)

// edgeFunc runs a command the edge answers itself (command.Spec.Edge).
type edgeFunc func(c *client, argv [][]byte)

// edgeHandlers are the handlers of the edge's commands, by name; the
// commands themselves are specified in the command table.
var edgeHandlers = map[string]edgeFunc{
	"ping": cmdPing, "echo": cmdEcho, "select": cmdSelect, "quit": cmdQuit, "hello": cmdHello, "auth": cmdAuth,
	"client": cmdClient, "multi": cmdMulti, "exec": cmdExec, "discard": cmdDiscard, "watch": cmdWatch,
	"unwatch": cmdUnwatch, "info": cmdInfo, "command": cmdCommand, "config": cmdConfig, "readonly": cmdReadonly,
	"readwrite": cmdReadwrite, "role": cmdRole, "cluster": cmdCluster, "goblin": cmdGoblin, "acl": cmdACL,
	"time": cmdTime, "slowlog": cmdSlowlog, "latency": cmdLatency, "monitor": cmdMonitor,
	"reset": cmdReset, "wait": cmdWait, "waitaof": cmdWaitaof,
}

func init() {
	for _, s := range command.All() {
		if s.Edge && edgeHandlers[s.Name] == nil {
			panic("resp: no handler for edge command " + s.Name)
		}
	}
	for name := range edgeHandlers {
		if s := command.Find([]byte(name)); s == nil || !s.Edge {
			panic("resp: handler for " + name + ", not an edge command")
		}
	}
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
	c.setInfo(func() { c.db = db })
	c.reply(func(w *command.Writer) { w.OK() })
}

func cmdReadonly(c *client, argv [][]byte) {
	c.setInfo(func() { c.readonly = true })
	c.reply(func(w *command.Writer) { w.OK() })
}

func cmdReadwrite(c *client, argv [][]byte) {
	c.setInfo(func() { c.readonly = false })
	c.reply(func(w *command.Writer) { w.OK() })
}

// cmdReset answers RESET: the connection goes back to how a new one
// starts, as Redis 7.2 resets it. It leaves MONITOR mode, drops its
// transaction and watched keys, selects database 0, speaks RESP2, forgets
// its name and READONLY, and is the default user's again: authenticated
// only when that user is on and needs no password. Its library name and
// version stay (they describe the client behind it, as Redis keeps them).
// Goblin has no Pub/Sub, tracking, ASKING or silenced replies to end, and
// CLIENT NO-EVICT and NO-TOUCH set nothing.
func cmdReset(c *client, argv [][]byte) {
	// The lines the monitor already had go out before RESET's reply.
	c.s.monitors.stop(c)
	c.setInfo(func() {
		c.multi = nil
		c.db = 0
		c.proto = 2
		c.name = ""
		c.readonly = false
	})
	c.watch = watchState{}
	c.initACL()
	c.reply(func(w *command.Writer) { w.Simple("RESET") })
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
	c.setInfo(func() {
		if setName {
			c.name = string(name)
		}
		if ver != 0 {
			c.proto = int(ver)
		}
	})
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
		w.BulkString(redisMode(st))
		w.BulkString("role")
		w.BulkString(st.Role)
		w.BulkString("modules")
		w.Array(0)
	})
}

// redisMode is how Redis names the server's mode (HELLO, INFO): cluster
// when the node runs with peers.
func redisMode(st node.Status) string {
	if st.Clustered {
		return "cluster"
	}
	return "standalone"
}

// parseLongLong is Redis's string2ll on a command argument.
func parseLongLong(b []byte) (int64, bool) { return command.ParseInt(b) }

// cmdTime answers TIME: the Unix time in seconds and the microseconds
// within the second, as two bulk strings.
func cmdTime(c *client, argv [][]byte) {
	now := time.Now()
	c.reply(func(w *command.Writer) {
		w.Array(2)
		w.BulkString(strconv.FormatInt(now.Unix(), 10))
		w.BulkString(strconv.Itoa(now.Nanosecond() / 1000))
	})
}
