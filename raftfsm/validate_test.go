package raftfsm

import (
	"errors"
	"testing"
)

func multiEntry(cmds ...Command) *Entry {
	return &Entry{Op: OpMulti, Time: 1, Proto: 2, Commands: cmds}
}

// Validate accepts every entry a client edge proposes: writes with good
// arguments outside a transaction; inside one, any command a client may
// queue, bad arguments included (EXEC answers them, as in Redis).
func TestValidateAccepts(t *testing.T) {
	ok := map[string]*Entry{
		"zadd":           commandEntry(1, NewCommand(0, "ZADD", "k", "NX", "1", "a")),
		"resp3 db 15":    {Op: OpCommand, Proto: 3, Commands: []Command{NewCommand(15, "zincrby", "k", "1", "a")}},
		"blocking pop":   commandEntry(1, NewCommand(0, "BZPOPMIN", "k", "0.5")),
		"flushall async": commandEntry(1, NewCommand(0, "FLUSHALL", "ASYNC")),
		"batch":          {Op: OpBatch, Proto: 2, Commands: []Command{NewCommand(0, "ZADD", "k", "1", "a"), NewCommand(3, "DEL", "k"), NewCommand(0, "EXPIRE", "k", "10")}},
		"multi":          multiEntry(NewCommand(0, "ZADD", "k", "x", "a"), NewCommand(0, "ZCARD", "k"), NewCommand(0, "PING"), NewCommand(0, "SELECT", "4"), NewCommand(4, "OBJECT", "ENCODING", "k"), NewCommand(4, "BZPOPMAX", "k", "0")),
		"empty multi":    multiEntry(),
		"watching multi": {Op: OpMulti, Proto: 2, WatchIndex: 9, Watched: []WatchedKey{{DB: 15, Key: []byte("w")}}, Commands: []Command{NewCommand(0, "ZCARD", "k")}},
	}
	for name, e := range ok {
		if err := Validate(e); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for i, e := range randomLog(2, 200) {
		if err := Validate(e); err != nil {
			t.Errorf("random log entry %d (%v): %v", i, e.Op, err)
		}
	}
}

// Validate refuses what no client edge proposes.
func TestValidateRefuses(t *testing.T) {
	bad := map[string]*Entry{
		"noop":             {Op: OpNoop, Proto: 2},
		"expire":           {Op: OpExpire, Proto: 2, Expired: []ExpiredKey{{Key: []byte("k")}}},
		"rules":            {Op: OpRules, Proto: 2, Rules: []Rule{{Pattern: "*", Layout: 1}}},
		"unknown op":       {Op: 200, Proto: 2},
		"protocol":         {Op: OpCommand, Proto: 1, Commands: []Command{NewCommand(0, "ZADD", "k", "1", "a")}},
		"two in a command": {Op: OpCommand, Proto: 2, Commands: []Command{NewCommand(0, "DEL", "a"), NewCommand(0, "DEL", "b")}},
		"none in a batch":  {Op: OpBatch, Proto: 2},
		"read":             commandEntry(1, NewCommand(0, "ZCARD", "k")),
		"connection":       commandEntry(1, NewCommand(0, "SELECT", "1")),
		"unknown":          commandEntry(1, NewCommand(0, "NOSUCH", "k")),
		"transaction":      commandEntry(1, NewCommand(0, "MULTI")),
		"arity":            commandEntry(1, NewCommand(0, "ZADD", "k", "1")),
		"arguments":        commandEntry(1, NewCommand(0, "ZADD", "k", "x", "a")),
		"timeout":          commandEntry(1, NewCommand(0, "BZPOPMIN", "k", "-1")),
		"db 16":            commandEntry(1, NewCommand(16, "DEL", "k")),
		"db -1":            commandEntry(1, NewCommand(-1, "DEL", "k")),
		"no name":          commandEntry(1, Command{}),
		"bad in a batch":   {Op: OpBatch, Proto: 2, Commands: []Command{NewCommand(0, "DEL", "a"), NewCommand(0, "ZRANGE", "k", "0", "-1")}},
		"watch in a batch": {Op: OpBatch, Proto: 2, Watched: []WatchedKey{{Key: []byte("w")}}, Commands: []Command{NewCommand(0, "DEL", "a")}},
		"rules in a batch": {Op: OpBatch, Proto: 2, Rules: []Rule{{Pattern: "*"}}, Commands: []Command{NewCommand(0, "DEL", "a")}},
		"multi unknown":    multiEntry(NewCommand(0, "ZADD", "k", "1", "a"), NewCommand(0, "NOSUCH")),
		"multi nested":     multiEntry(NewCommand(0, "MULTI")),
		"multi arity":      multiEntry(NewCommand(0, "ZCARD")),
		"multi subcommand": multiEntry(NewCommand(0, "OBJECT", "NOSUCH", "k")),
		"multi db":         multiEntry(NewCommand(17, "ZCARD", "k")),
		"multi watched db": {Op: OpMulti, Proto: 2, Watched: []WatchedKey{{DB: 16, Key: []byte("w")}}},
	}
	for name, e := range bad {
		if err := Validate(e); !errors.Is(err, ErrInvalidEntry) {
			t.Errorf("%s: Validate = %v, want ErrInvalidEntry", name, err)
		}
	}
}
