package resp

import "testing"

// Transactions as Redis 7.2 answers them: what dooms a transaction, what
// does not, and what EXEC says.
func TestTransactionRules(t *testing.T) {
	s, _ := startServer(t, Config{})
	c := dial(t, s)
	const abort = "-EXECABORT Transaction discarded because of previous errors.\r\n"
	run(t, c, []exchange{
		// WATCH inside MULTI and a nested MULTI are refused without dooming it.
		{[]string{"MULTI"}, "+OK\r\n"},
		{[]string{"WATCH", "k"}, "-ERR WATCH inside MULTI is not allowed\r\n"},
		{[]string{"MULTI"}, "-ERR MULTI calls can not be nested\r\n"},
		{[]string{"PING"}, "+QUEUED\r\n"},
		{[]string{"EXEC"}, "*1\r\n+PONG\r\n"},
		// Queuing errors doom it: unknown command, arity, subcommand, refused.
		{[]string{"MULTI"}, "+OK\r\n"},
		{[]string{"NOSUCH", "x"}, "-ERR unknown command 'NOSUCH', with args beginning with: 'x' \r\n"},
		{[]string{"EXEC"}, abort},
		{[]string{"MULTI"}, "+OK\r\n"},
		{[]string{"OBJECT", "FOO", "k"}, "-ERR unknown subcommand 'FOO'. Try OBJECT HELP.\r\n"},
		{[]string{"EXEC"}, abort},
		{[]string{"MULTI"}, "+OK\r\n"},
		{[]string{"OBJECT", "ENCODING"}, "-ERR wrong number of arguments for 'object|encoding' command\r\n"},
		{[]string{"EXEC"}, abort},
		{[]string{"MULTI"}, "+OK\r\n"},
		{[]string{"HELLO", "3"}, "-ERR Command not allowed inside a transaction\r\n"},
		{[]string{"EXEC"}, abort},
		// Connection and server commands are queued; the edge runs them
		// after the state machine, their replies in their places.
		{[]string{"MULTI"}, "+OK\r\n"},
		{[]string{"CLIENT", "SETNAME", "tx"}, "+QUEUED\r\n"},
		{[]string{"ZADD", "e", "1", "a"}, "+QUEUED\r\n"},
		{[]string{"CLIENT", "GETNAME"}, "+QUEUED\r\n"},
		{[]string{"ZADD", "e", "2", "b", "3", "c"}, "+QUEUED\r\n"},
		{[]string{"CONFIG", "GET", "databases"}, "+QUEUED\r\n"},
		{[]string{"CONFIG", "SET", "maxmemory", "1"}, "+QUEUED\r\n"},
		{[]string{"ZRANGE", "e", "0", "-1"}, "+QUEUED\r\n"},
		{[]string{"EXEC"}, "*7\r\n+OK\r\n:1\r\n$2\r\ntx\r\n:2\r\n*2\r\n$9\r\ndatabases\r\n$2\r\n16\r\n" +
			"-ERR CONFIG SET failed (possibly related to argument 'maxmemory') - can't set immutable config\r\n*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n"},
		// Their subcommands and arities are checked when queued.
		{[]string{"MULTI"}, "+OK\r\n"},
		{[]string{"CONFIG", "NOPE"}, "-ERR unknown subcommand 'NOPE'. Try CONFIG HELP.\r\n"},
		{[]string{"EXEC"}, abort},
		{[]string{"MULTI"}, "+OK\r\n"},
		{[]string{"CLIENT", "SETNAME"}, "-ERR wrong number of arguments for 'client|setname' command\r\n"},
		{[]string{"EXEC"}, abort},
		{[]string{"CLIENT", "SETNAME"}, "-ERR wrong number of arguments for 'client|setname' command\r\n"},
		// Argument errors are not queuing errors: they answer inside EXEC.
		{[]string{"MULTI"}, "+OK\r\n"},
		{[]string{"ZADD", "k", "x", "a"}, "+QUEUED\r\n"},
		{[]string{"BZPOPMIN", "k", "-1"}, "+QUEUED\r\n"},
		{[]string{"BZPOPMIN", "empty", "0"}, "+QUEUED\r\n"},
		{[]string{"ZADD", "k", "1", "a"}, "+QUEUED\r\n"},
		{[]string{"EXEC"}, "*4\r\n-ERR value is not a valid float\r\n-ERR timeout is negative\r\n*-1\r\n:1\r\n"},
		// A refused EXEC aborts the transaction there and then.
		{[]string{"MULTI"}, "+OK\r\n"},
		{[]string{"ZADD", "k", "2", "b"}, "+QUEUED\r\n"},
		{[]string{"EXEC", "now"}, "-EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' command\r\n"},
		{[]string{"EXEC"}, "-ERR EXEC without MULTI\r\n"},
		{[]string{"ZCARD", "k"}, ":1\r\n"},
		{[]string{"EXEC", "now"}, "-EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' command\r\n"},
		{[]string{"DISCARD"}, "-ERR DISCARD without MULTI\r\n"},
		// Watching, then writing the key oneself, aborts too.
		{[]string{"WATCH", "k"}, "+OK\r\n"},
		{[]string{"ZADD", "k", "3", "c"}, ":1\r\n"},
		{[]string{"MULTI"}, "+OK\r\n"},
		{[]string{"PING"}, "+QUEUED\r\n"},
		{[]string{"EXEC"}, "*-1\r\n"},
		// DISCARD and EXEC unwatch.
		{[]string{"WATCH", "k"}, "+OK\r\n"},
		{[]string{"MULTI"}, "+OK\r\n"},
		{[]string{"DISCARD"}, "+OK\r\n"},
		{[]string{"ZADD", "k", "4", "d"}, ":1\r\n"},
		{[]string{"MULTI"}, "+OK\r\n"},
		{[]string{"EXEC"}, "*0\r\n"},
		// UNWATCH inside MULTI is queued (a no-op at EXEC).
		{[]string{"WATCH", "k"}, "+OK\r\n"},
		{[]string{"MULTI"}, "+OK\r\n"},
		{[]string{"UNWATCH"}, "+QUEUED\r\n"},
		{[]string{"EXEC"}, "*1\r\n+OK\r\n"},
	})
	// RESP3: an aborted EXEC is a null.
	run(t, c, []exchange{
		{[]string{"HELLO", "3"}, c.do("HELLO", "3")},
		{[]string{"WATCH", "k"}, "+OK\r\n"},
		{[]string{"ZADD", "k", "5", "e"}, ":1\r\n"},
		{[]string{"MULTI"}, "+OK\r\n"},
		{[]string{"EXEC"}, "_\r\n"},
	})
}

func TestConfig(t *testing.T) {
	s, _ := startServer(t, Config{})
	c := dial(t, s)
	run(t, c, []exchange{
		{[]string{"CONFIG", "GET", "MAXMEMORY"}, "*2\r\n$9\r\nMAXMEMORY\r\n$1\r\n0\r\n"},
		{[]string{"CONFIG", "GET", "databases", "databases", "nosuch"}, "*2\r\n$9\r\ndatabases\r\n$2\r\n16\r\n"},
		{[]string{"CONFIG", "GET", "zset-max-*-entries"}, "*4\r\n$25\r\nzset-max-listpack-entries\r\n$3\r\n128\r\n$24\r\nzset-max-ziplist-entries\r\n$3\r\n128\r\n"},
		{[]string{"CONFIG", "SET", "zset-max-ziplist-entries", "0"}, "+OK\r\n"},
		{[]string{"CONFIG", "GET", "zset-max-listpack-entries"}, "*2\r\n$25\r\nzset-max-listpack-entries\r\n$1\r\n0\r\n"},
		{[]string{"CONFIG", "SET", "zset-max-listpack-value", "x"}, "-ERR CONFIG SET failed (possibly related to argument 'zset-max-listpack-value') - argument must be a memory value\r\n"},
		{[]string{"CONFIG", "SET", "zset-max-listpack-entries", "x"}, "-ERR CONFIG SET failed (possibly related to argument 'zset-max-listpack-entries') - argument couldn't be parsed into an integer\r\n"},
		{[]string{"CONFIG", "SET", "zset-max-listpack-entries", "-1"}, "-ERR CONFIG SET failed (possibly related to argument 'zset-max-listpack-entries') - argument must be between 0 and 9223372036854775807 inclusive\r\n"},
		{[]string{"CONFIG", "SET", "zset-max-listpack-value", "1kb"}, "+OK\r\n"},
		{[]string{"CONFIG", "GET", "zset-max-listpack-value"}, "*2\r\n$23\r\nzset-max-listpack-value\r\n$4\r\n1024\r\n"},
		{[]string{"CONFIG", "SET", "zset-max-listpack-value", "64"}, "+OK\r\n"},
		{[]string{"CONFIG", "SET", "maxmemory", "1mb"}, "-ERR CONFIG SET failed (possibly related to argument 'maxmemory') - can't set immutable config\r\n"},
		{[]string{"CONFIG", "SET", "nosuch", "1"}, "-ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'\r\n"},
		{[]string{"CONFIG", "SET", "save", ""}, "+OK\r\n"},
		{[]string{"CONFIG", "SET", "SAVE", "", "appendonly", "No", "timeout", "0", "notify-keyspace-events", ""}, "+OK\r\n"},
		{[]string{"CONFIG", "SET", "save", "900 1"}, "-ERR CONFIG SET failed (possibly related to argument 'save') - Goblin keeps it at ''\r\n"},
		{[]string{"CONFIG", "SET", "timeout", "300"}, "-ERR CONFIG SET failed (possibly related to argument 'timeout') - Goblin keeps it at '0'\r\n"},
		{[]string{"CONFIG", "SET", "appendonly", "yes"}, "-ERR CONFIG SET failed (possibly related to argument 'appendonly') - Goblin keeps it at 'no'\r\n"},
		{[]string{"CONFIG", "SET", "proto-max-bulk-len", "536870912"}, "+OK\r\n"},
		{[]string{"CONFIG", "SET", "databases", "16"}, "-ERR CONFIG SET failed (possibly related to argument 'databases') - can't set immutable config\r\n"},
		{[]string{"CONFIG", "SET", "zset-max-listpack-value", "1", "ZSET-MAX-LISTPACK-VALUE", "2"}, "-ERR CONFIG SET failed (possibly related to argument 'ZSET-MAX-LISTPACK-VALUE') - duplicate parameter\r\n"},
		{[]string{"CONFIG", "SET", "zset-max-listpack-value", "1", "timeout"}, "-ERR syntax error\r\n"},
		{[]string{"CONFIG", "SET", "zset-max-listpack-value", "7", "maxmemory", "1"}, "-ERR CONFIG SET failed (possibly related to argument 'maxmemory') - can't set immutable config\r\n"},
		{[]string{"CONFIG", "GET", "zset-max-listpack-value"}, "*2\r\n$23\r\nzset-max-listpack-value\r\n$2\r\n64\r\n"},
		{[]string{"CONFIG", "GET"}, "-ERR wrong number of arguments for 'config|get' command\r\n"},
		{[]string{"CONFIG", "FOO"}, "-ERR unknown subcommand 'FOO'. Try CONFIG HELP.\r\n"},
		{[]string{"CONFIG", "REWRITE"}, "-ERR The server is running without a config file\r\n"},
		{[]string{"CONFIG", "RESETSTAT"}, "+OK\r\n"},
		{[]string{"CONFIG", "SET", "requirepass", "s3cret"}, "+OK\r\n"},
		{[]string{"PING"}, "+PONG\r\n"}, // this connection stays authenticated
	})
	c2 := dial(t, s)
	run(t, c2, []exchange{
		{[]string{"PING"}, "-NOAUTH Authentication required.\r\n"},
		{[]string{"AUTH", "s3cret"}, "+OK\r\n"},
		{[]string{"CONFIG", "GET", "requirepass"}, "*2\r\n$11\r\nrequirepass\r\n$6\r\ns3cret\r\n"},
	})
}

// TestBlockRegistryOrder: a ready key wakes the first waiter only; the
// next is woken when the first leaves.
func TestBlockRegistryOrder(t *testing.T) {
	var r blockRegistry
	w1 := r.add(1, 0, [][]byte{[]byte("k"), []byte("other")})
	w2 := r.add(2, 0, [][]byte{[]byte("k")})
	w3 := r.add(3, 1, [][]byte{[]byte("k")})
	woken := func(w *waiter) bool {
		select {
		case <-w.wake:
			return true
		default:
			return false
		}
	}
	r.ready(0, []byte("k"))
	if !woken(w1) || woken(w2) || woken(w3) {
		t.Fatal("ready must wake the first waiter of that key in that database only")
	}
	r.remove(w1)
	if !woken(w2) || woken(w3) {
		t.Fatal("the first waiter leaving must pass the turn to the next")
	}
	if r.count.Load() != 2 {
		t.Fatalf("blocked count %d, want 2", r.count.Load())
	}
	r.ready(0, []byte("other"))
	r.ready(1, []byte("k"))
	if !woken(w3) {
		t.Fatal("database 1's waiter not woken")
	}
	r.remove(w2)
	r.remove(w3)
	if len(r.queues) != 0 || r.count.Load() != 0 {
		t.Fatalf("registry not empty: %d queues, %d blocked", len(r.queues), r.count.Load())
	}
	r.wakeAll() // nothing to wake: must not panic
}
