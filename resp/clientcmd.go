package resp

import (
	"fmt"
	"strings"
	"time"

	"github.com/goblindb/goblin/command"
)

func cmdClient(c *client, argv [][]byte) {
	sub := strings.ToLower(string(argv[1]))
	n := len(argv)
	ok := func() { c.reply(func(w *command.Writer) { w.OK() }) }
	switch {
	case sub == "id" && n == 2:
		c.reply(func(w *command.Writer) { w.Int(c.id) })
	case sub == "getname" && n == 2:
		c.reply(func(w *command.Writer) {
			if c.name == "" {
				w.Null()
			} else {
				w.BulkString(c.name)
			}
		})
	case sub == "setname" && n == 3:
		if !validClientAttr(argv[2]) {
			c.replyError(errClientName)
			return
		}
		c.setInfo(func() { c.name = string(argv[2]) })
		ok()
	case sub == "setinfo" && n == 4:
		attr := strings.ToLower(string(argv[2]))
		if attr != "lib-name" && attr != "lib-ver" {
			c.replyError(command.Errorf("ERR Unrecognized option '%s'", argv[2]))
			return
		}
		if !validClientAttr(argv[3]) {
			c.replyError(command.Errorf("ERR %s cannot contain spaces, newlines or special characters.", argv[2]))
			return
		}
		c.setInfo(func() {
			if attr == "lib-name" {
				c.libName = string(argv[3])
			} else {
				c.libVer = string(argv[3])
			}
		})
		ok()
	case sub == "info" && n == 2:
		c.reply(func(w *command.Writer) { w.Verbatim(c.info() + "\n") })
	case sub == "list":
		clientList(c, argv)
	case (sub == "no-evict" || sub == "no-touch") && n == 3:
		v := strings.ToLower(string(argv[2]))
		if v != "on" && v != "off" {
			c.replyError(command.ErrSyntax)
			return
		}
		ok()
	case sub == "reply" && n == 3:
		v := strings.ToLower(string(argv[2]))
		if v != "on" && v != "off" && v != "skip" {
			c.replyError(command.ErrSyntax)
			return
		}
		if v != "on" {
			// OFF and SKIP would silence replies; Goblin always replies.
			c.replyError(command.Errorf("ERR CLIENT REPLY OFF|SKIP is not supported by Goblin"))
			return
		}
		ok()
	case sub == "unblock" && (n == 3 || n == 4):
		cmdClientUnblock(c, argv)
	case sub == "kill":
		clientKill(c, argv)
	case sub == "pause" && (n == 3 || n == 4):
		clientPause(c, argv)
	case sub == "unpause" && n == 2:
		c.s.pause.unpause()
		ok()
	case sub == "help" && n == 2:
		c.reply(func(w *command.Writer) {
			command.WriteHelp(w, argv[0], []string{
				"GETNAME", "    Return the name of the current connection.",
				"ID", "    Return the ID of the current connection.",
				"INFO", "    Return information about the current client connection.",
				"KILL <ip:port>", "    Close the connection from <ip:port> (this one included).",
				"KILL <filter> <value> [<filter> <value> ...]", "    Close the connections matching every filter; answers how many. Filters:",
				"    ID <id>, ADDR <ip:port>, LADDR <ip:port> (the address they reached),",
				"    USER <name>, TYPE NORMAL|MASTER|REPLICA|PUBSUB, SKIPME YES|NO (default YES).",
				"LIST [TYPE normal|master|replica|pubsub] [ID <id> [<id> ...]]", "    Return information about client connections.",
				"PAUSE <ms> [WRITE|ALL]", "    Hold every command (ALL, the default), or writes only, for <ms> milliseconds.",
				"UNPAUSE", "    End a pause now.",
				"SETINFO <option> <value>", "    Set client meta attr. Options are: LIB-NAME, LIB-VER.",
				"SETNAME <name>", "    Assign the name <name> to the current connection.",
				"UNBLOCK <clientid> [TIMEOUT|ERROR]", "    Unblock the specified blocked client.",
			})
		})
	default:
		c.replyError(command.UnknownSubcommandError(argv))
	}
}

func clientList(c *client, argv [][]byte) {
	var ids map[int64]bool
	for j := 2; j < len(argv); j++ {
		switch {
		case strings.EqualFold(string(argv[j]), "type") && j+1 < len(argv):
			t := strings.ToLower(string(argv[j+1]))
			if t != "normal" && t != "master" && t != "replica" && t != "slave" && t != "pubsub" {
				c.replyError(command.Errorf("ERR Unknown client type '%s'", argv[j+1]))
				return
			}
			if t != "normal" {
				ids = map[int64]bool{} // only normal clients exist
			}
			j++
		case strings.EqualFold(string(argv[j]), "id") && j+1 < len(argv):
			if ids == nil {
				ids = map[int64]bool{}
			}
			for j++; j < len(argv); j++ {
				id, ok := command.ParseInt(argv[j])
				if !ok || id <= 0 {
					c.replyError(command.Errorf("ERR Invalid client ID"))
					return
				}
				ids[id] = true
			}
		default:
			c.replyError(command.ErrSyntax)
			return
		}
	}
	var b strings.Builder
	for _, o := range c.s.clientList() {
		if ids != nil && !ids[o.id] {
			continue
		}
		b.WriteString(o.info())
		b.WriteByte('\n')
	}
	c.reply(func(w *command.Writer) { w.Verbatim(b.String()) })
}

// info is the client's CLIENT LIST line (without the newline).
func (c *client) info() string {
	now := time.Now()
	last := time.UnixMilli(c.lastTime.Load())
	c.infoMu.Lock()
	defer c.infoMu.Unlock()
	multi := -1
	if c.multi != nil {
		multi = len(c.multi.commands)
	}
	// Redis's flags that Goblin has, in Redis's order.
	flags := ""
	if c.monitoring.Load() {
		flags += "O"
	}
	if c.multi != nil {
		flags += "x"
	}
	if c.s.blocked.has(c.id) {
		flags += "b"
	}
	if c.unix {
		flags += "U"
	}
	if c.readonly {
		flags += "r"
	}
	if flags == "" {
		flags = "N"
	}
	return fmt.Sprintf("id=%d addr=%s laddr=%s fd=%d name=%s age=%d idle=%d flags=%s db=%d sub=0 psub=0 ssub=0 multi=%d qbuf=%d qbuf-free=%d argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=%d tot-mem=%d events=r cmd=%s user=%s redir=-1 resp=%d lib-name=%s lib-ver=%s",
		c.id, c.addr, c.laddr, c.fd, c.name, int(now.Sub(c.created).Seconds()), int(now.Sub(last).Seconds()),
		flags, c.db, multi, c.qbuf.Load(), c.qbufFree.Load(), c.omem.Load(),
		c.qbuf.Load()+c.qbufFree.Load()+c.outCap.Load(),
		*c.lastCmd.Load(), c.userName(), c.proto, c.libName, c.libVer)
}

// clientKill answers CLIENT KILL: the old form (an address; OK or an
// error) and the new one (filters; the number of connections closed).
// The connections close once their current command has answered; the
// caller's own, when it matches, after this reply.
func clientKill(c *client, argv [][]byte) {
	var addr, laddr, user string
	var id int64
	typeSet, skipme := false, true
	normal := true
	switch {
	case len(argv) == 3:
		addr, skipme = string(argv[2]), false
	case len(argv) > 3:
		for i := 2; i < len(argv); i += 2 {
			if i+1 >= len(argv) {
				c.replyError(command.ErrSyntax)
				return
			}
			v := argv[i+1]
			switch strings.ToLower(string(argv[i])) {
			case "id":
				n, ok := command.ParseInt(v)
				if !ok || n < 1 {
					c.replyError(command.Errorf("ERR client-id should be greater than 0"))
					return
				}
				id = n
			case "type":
				switch strings.ToLower(string(v)) {
				case "normal":
					normal = true
				case "master", "replica", "slave", "pubsub":
					normal = false
				default:
					c.replyError(command.Errorf("ERR Unknown client type '%s'", v))
					return
				}
				typeSet = true
			case "addr":
				addr = string(v)
			case "laddr":
				laddr = string(v)
			case "user":
				if c.s.users().Get(string(v)) == nil {
					c.replyError(command.Errorf("ERR No such user '%s'", v))
					return
				}
				user = string(v)
			case "skipme":
				switch strings.ToLower(string(v)) {
				case "yes":
					skipme = true
				case "no":
					skipme = false
				default:
					c.replyError(command.ErrSyntax)
					return
				}
			default:
				c.replyError(command.ErrSyntax)
				return
			}
		}
	}
	killed, self := 0, false
	for _, o := range c.s.clientList() {
		switch {
		case o.isKilled(): // closing already
			continue
		case addr != "" && o.addr != addr,
			laddr != "" && o.laddr != laddr,
			typeSet && !normal, // every Goblin connection is a normal one
			id != 0 && o.id != id,
			user != "" && o.userName() != user,
			o == c && skipme:
			continue
		}
		if o == c {
			self = true
		} else {
			o.kill()
		}
		killed++
	}
	if len(argv) == 3 {
		if killed == 0 {
			c.replyError(command.Errorf("ERR No such client"))
		} else {
			c.reply(func(w *command.Writer) { w.OK() })
		}
	} else {
		c.reply(func(w *command.Writer) { w.Int(int64(killed)) })
	}
	if self {
		c.quit = true // closes once the reply is written
	}
}
