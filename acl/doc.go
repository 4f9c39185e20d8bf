// Package acl is Goblin's model of Redis 7.2's ACL users: the rules that
// create and change them, the descriptions Redis prints for them, the
// permission check run before every command, the ACL log, and the aclfile
// format. It knows nothing of RESP or Raft: the RESP edge asks it whether
// a connection's user may run a command, and the state machine keeps the
// replicated set of users.
//
// # Users and selectors
//
// A User has a name, an on/off switch, a list of password hashes (SHA-256,
// lowercase hex, as Redis keeps them) or nopass, and one or more
// selectors. The first selector is the root: rules given outside
// parentheses change it. Each "(...)" rule adds another selector. A
// command is allowed when any selector allows it, so selectors widen
// what a user may do.
//
// A selector holds:
//
//   - a bitmap of allowed commands, indexed by the command IDs of package
//     command (every Redis 7.2 command and subcommand, and Goblin's own),
//     plus a bit that only +@all sets: whether commands added later are
//     allowed, which is how a description starts with +@all or -@all;
//   - first arguments allowed for otherwise denied commands (+select|0);
//   - the command rules as given, in order, after Redis's compaction (a
//     rule replaces an earlier rule for the same command, and a rule for a
//     command replaces the rules for its subcommands), which is what ACL
//     LIST and ACL GETUSER print;
//   - key patterns, each with read and write permissions (~, %R~, %W~,
//     %RW~), or allkeys;
//   - channel patterns, or allchannels. Goblin serves no Pub/Sub command,
//     so they are only stored and reported, so that descriptions and
//     aclfiles round-trip as in Redis.
//
// Rules naming commands Goblin does not serve are accepted as Redis
// accepts them (an aclfile written for Redis loads unchanged); they only
// change what the descriptions say.
//
// # Immutability
//
// A User never changes once built: SetUser returns a new User built from a
// copy, and Users (the set of users) is copied on write. The RESP edge
// holds a pointer to its connection's User and, on the command path, only
// compares the current Users pointer with the one it resolved its user
// from; the permission check itself is a bitmap test, plus key pattern
// matching when the user's keys are restricted. A user with every command
// and every key (the default user, unless changed) is checked with one
// branch.
//
// # Errors
//
// Rule errors carry Redis's exact reasons (RuleError, and the Err*
// values); the RESP edge puts them in Redis's reply texts.
package acl
