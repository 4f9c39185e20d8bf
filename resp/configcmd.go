package resp

import (
	"sort"
	"strings"

	"github.com/goblindb/goblin/command"
	"github.com/goblindb/goblin/keyspace"
)

// configParams returns the parameters CONFIG GET answers: the settings
// clients probe at connect time, Redis's values for what Goblin does not
// have, and Goblin's own.
func (s *Server) configParams() map[string]string {
	p := map[string]string{
		"databases":                 "16",
		"maxmemory":                 "0",
		"maxmemory-policy":          "noeviction",
		"save":                      "",
		"appendonly":                "no",
		"timeout":                   "0",
		"maxclients":                "10000",
		"requirepass":               "",
		"cluster-enabled":           "no",
		"zset-max-listpack-entries": "128",
		"zset-max-listpack-value":   "64",
		"zset-max-ziplist-entries":  "128",
		"zset-max-ziplist-value":    "64",
		"proto-max-bulk-len":        "536870912",
		"port":                      "0",
	}
	if len(s.listeners) > 0 {
		p["port"] = portOf(s.listeners[0].Addr().String())
		p["bind"] = s.listeners[0].Addr().String()
	}
	if s.cfg.UnixSocket != "" {
		p["unixsocket"] = s.cfg.UnixSocket
	}
	if s.cfg.RequirePass != "" {
		p["requirepass"] = s.cfg.RequirePass
	}
	p["appendfsync"] = s.backend.Status().Fsync
	for k, v := range s.cfg.Settings {
		p[k] = v
	}
	return p
}

func cmdConfig(c *client, argv [][]byte) {
	sub := strings.ToLower(string(argv[1]))
	switch {
	case sub == "get" && len(argv) >= 3:
		params := c.s.configParams()
		names := make([]string, 0, len(params))
		for k := range params {
			names = append(names, k)
		}
		sort.Strings(names)
		matched := map[string]bool{}
		var out []string
		for _, pat := range argv[2:] {
			for _, n := range names {
				if !matched[n] && keyspace.Match([]byte(strings.ToLower(string(pat))), []byte(n), true) {
					matched[n] = true
					out = append(out, n)
				}
			}
		}
		c.reply(func(w *command.Writer) {
			w.Map(len(out))
			for _, n := range out {
				w.BulkString(n)
				w.BulkString(params[n])
			}
		})
	case sub == "set" && len(argv) >= 4 && len(argv)%2 == 0:
		name := strings.ToLower(string(argv[2]))
		if _, ok := c.s.configParams()[name]; !ok {
			c.replyError(command.Errorf("ERR Unknown option or number of arguments for CONFIG SET - '%s'", argv[2]))
			return
		}
		c.replyError(command.Errorf("ERR CONFIG SET failed (possibly related to argument '%s') - Goblin sets this at startup (see goblind --help)", argv[2]))
	case sub == "resetstat" && len(argv) == 2:
		c.s.stats.commands.Store(0)
		c.s.stats.rejected.Store(0)
		c.s.stats.errors.Store(0)
		c.s.stats.perCommand.Range(func(k, _ any) bool { c.s.stats.perCommand.Delete(k); return true })
		c.reply(func(w *command.Writer) { w.OK() })
	default:
		c.replyError(command.UnknownSubcommandError(argv))
	}
}
