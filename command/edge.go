package command

// The commands the RESP edge runs itself: connections, transactions and
// the server's introspection. They are specified here, beside the state
// machine's commands, so every command is defined once; the edge holds
// their handlers. Arity and group come from Redis's metadata, and a
// container's subcommands from the ones named (with Redis's arities).
//
// PING, ECHO, SELECT and UNWATCH (server.go) are edge commands too: the
// state machine runs them only inside a transaction.

func init() {
	register(
		&Spec{Name: "quit", Edge: true, InMulti: MultiRunNow},
		&Spec{Name: "hello", Edge: true, InMulti: MultiRefuse},
		&Spec{Name: "auth", Edge: true, InMulti: MultiAtExec},
		&Spec{Name: "client", Edge: true, InMulti: MultiAtExec, Sub: subArities("client",
			"id", "getname", "setname", "setinfo", "info", "list", "kill", "pause", "unpause",
			"no-evict", "no-touch", "reply", "unblock", "help")},
		&Spec{Name: "multi", Edge: true, InMulti: MultiRunNow},
		&Spec{Name: "exec", Edge: true, InMulti: MultiRunNow},
		&Spec{Name: "discard", Edge: true, InMulti: MultiRunNow},
		&Spec{Name: "watch", Edge: true, InMulti: MultiRunNow},
		&Spec{Name: "info", Edge: true, InMulti: MultiAtExec},
		&Spec{Name: "command", Edge: true, InMulti: MultiAtExec, Sub: subArities("command")},
		&Spec{Name: "config", Edge: true, InMulti: MultiAtExec, Sub: subArities("config",
			"get", "set", "resetstat", "rewrite", "help")},
		&Spec{Name: "readonly", Edge: true, InMulti: MultiAtExec},
		&Spec{Name: "readwrite", Edge: true, InMulti: MultiAtExec},
		&Spec{Name: "role", Edge: true, InMulti: MultiAtExec},
		&Spec{Name: "time", Edge: true, InMulti: MultiAtExec},
		&Spec{Name: "cluster", Edge: true, InMulti: MultiAtExec,
			Served: []string{"help", "info", "keyslot", "myid", "myshardid", "nodes", "shards", "slots"}},
		&Spec{Name: "goblin", Edge: true, InMulti: MultiRefuse},
		&Spec{Name: "acl", Edge: true, InMulti: MultiAtExec, Sub: subArities("acl")},
		&Spec{Name: "slowlog", Edge: true, InMulti: MultiAtExec, Sub: subArities("slowlog", "get", "len", "reset", "help")},
		&Spec{Name: "latency", Edge: true, InMulti: MultiAtExec, Sub: subArities("latency",
			"latest", "history", "reset", "doctor", "help")},
		&Spec{Name: "monitor", Edge: true, InMulti: MultiRefuse},
		&Spec{Name: "wait", Edge: true, InMulti: MultiAtExec},
		&Spec{Name: "waitaof", Edge: true, InMulti: MultiAtExec},
		// RESET is never queued: inside a transaction it runs at once and
		// discards it, as in Redis.
		&Spec{Name: "reset", Edge: true, InMulti: MultiRunNow},
	)
}

// subArities returns the arity, counting the command name, of each of
// the named subcommands of name (all of them when none is named), from
// Redis's metadata.
func subArities(name string, subs ...string) map[string]int {
	m := metaByName[name]
	out := map[string]int{}
	for _, s := range m.Subs {
		out[s.SubName()] = s.Arity
	}
	if len(subs) == 0 {
		return out
	}
	named := map[string]int{}
	for _, s := range subs {
		a, ok := out[s]
		if !ok {
			panic("command: " + name + " has no subcommand " + s)
		}
		named[s] = a
	}
	return named
}
