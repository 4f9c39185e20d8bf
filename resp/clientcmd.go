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
		c.name = string(argv[2])
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
		if attr == "lib-name" {
			c.libName = string(argv[3])
		} else {
			c.libVer = string(argv[3])
		}
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
		if v != "on" {
			// OFF and SKIP would silence replies; Goblin always replies.
			c.replyError(command.Errorf("ERR CLIENT REPLY OFF|SKIP is not supported by Goblin"))
			return
		}
		ok()
	case sub == "unblock" && (n == 3 || n == 4):
		cmdClientUnblock(c, argv)
	case sub == "help" && n == 2:
		c.reply(func(w *command.Writer) {
			command.WriteHelp(w, argv[0], []string{
				"GETNAME", "    Return the name of the current connection.",
				"ID", "    Return the ID of the current connection.",
				"INFO", "    Return information about the current client connection.",
				"LIST [TYPE normal|master|replica|pubsub] [ID <id> [<id> ...]]", "    Return information about client connections.",
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
	multi := -1
	if c.multi != nil {
		multi = len(c.multi.commands)
	}
	flags := "N"
	if c.readonly {
		flags = "r"
	}
	return fmt.Sprintf("id=%d addr=%s laddr=%s fd=-1 name=%s age=%d idle=%d flags=%s db=%d sub=0 psub=0 ssub=0 multi=%d qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=0 tot-mem=0 events=r cmd=%s user=%s redir=-1 resp=%d lib-name=%s lib-ver=%s",
		c.id, c.addr, c.laddr, c.name, int(now.Sub(c.created).Seconds()), int(now.Sub(last).Seconds()),
		flags, c.db, multi, *c.lastCmd.Load(), c.userName(), c.proto, c.libName, c.libVer)
}
