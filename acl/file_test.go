package acl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file with errors is refused whole, with every error in Redis 7.2's
// words on one line.
func TestParseFileErrors(t *testing.T) {
	data := "user alice on >x ~* +@all\n\nuser bob +nosuch -@nope foo bar\n  user  carol on\nusers dave\nuser\nuser alice on\nuser eve (~a +get\nuser a\tb on\nuser fred %X~a #bad\n"
	_, _, err := ParseFile("/tmp/aclr/users.acl", []byte(data))
	want := "/tmp/aclr/users.acl:3: Error in applying operation '+nosuch': Unknown command or category name in ACL. " +
		"/tmp/aclr/users.acl:3: Error in applying operation '-@nope': Unknown command or category name in ACL. " +
		"/tmp/aclr/users.acl:3: Syntax error. /tmp/aclr/users.acl:4: Syntax error. " +
		"/tmp/aclr/users.acl:5 should start with user keyword followed by the username. " +
		"/tmp/aclr/users.acl:6 should start with user keyword followed by the username. " +
		"WARNING: Duplicate user 'alice' found on line 7. " +
		"/tmp/aclr/users.acl:8: Unmatched parenthesis in selector definition." +
		"'/tmp/aclr/users.acl:9: username 'a\tb' contains invalid characters. " +
		"/tmp/aclr/users.acl:10: Syntax error. " +
		"WARNING: ACL errors detected, no change to the previously active ACL rules was performed"
	if err == nil || err.Error() != want {
		t.Fatalf("got  %v\nwant %s", err, want)
	}
}

// A valid file loads, gets a default user when it has none, and ACL
// SAVE's format reads back the same users.
func TestParseFileAndSave(t *testing.T) {
	data := "user alice on >x ~* +@all (~k\t +get)\r\nuser bob on nopass\n"
	users, set, err := ParseFile("f", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(users) != 2 || users[0].Name != "alice" || strings.Join(users[0].Rules, "|") != "on|>x|~*|+@all|(~k\t +get)" {
		t.Fatalf("users %+v", users)
	}
	want := "user alice on sanitize-payload #2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881 ~* resetchannels +@all (~k resetchannels -@all +get)\n" +
		"user bob on nopass sanitize-payload resetchannels -@all\n" +
		"user default on nopass sanitize-payload ~* &* +@all\n"
	saved := string(FileContent(set))
	if saved != want {
		t.Fatalf("saved:\n%s\nwant:\n%s", saved, want)
	}
	_, again, err := ParseFile("f", []byte(saved))
	if err != nil || string(FileContent(again)) != want {
		t.Fatalf("reloaded: %v\n%s", err, FileContent(again))
	}
}

func TestOpenError(t *testing.T) {
	name := filepath.Join(t.TempDir(), "users.acl")
	_, err := os.ReadFile(name)
	if got, want := OpenError(name, err).Error(), "Error loading ACLs, opening file '"+name+"': No such file or directory"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
