package command

import "testing"

func TestZCreate(t *testing.T) {
	run72(t, []exchange72{
		// Declared, the key does not exist until a write creates it.
		{"ZCREATE ids int32:float32", ":0\r\n", ""},
		{"EXISTS ids", ":0\r\n", ""},
		{"ZADD ids 1.5 42 2 7", ":2\r\n", ""},
		{"OBJECT ENCODING ids", "$13\r\nint32:float32\r\n", ""},
		// Ties are ordered numerically in an integer layout.
		{"ZADD ids 2 10", ":1\r\n", ""},
		{"ZRANGE ids 0 -1", "*3\r\n$2\r\n42\r\n$1\r\n7\r\n$2\r\n10\r\n", ""},
		{"ZCREATE ids int64:float64", "-BUSYKEY Target key name already exists.\r\n", ""},
		// With members: created at once, checked before anything changes.
		{"ZCREATE u uuid:float32 1 not-a-uuid", "-ERR member is not valid for the key's packed layout\r\n", ""},
		{"EXISTS u", ":0\r\n", ""},
		{"ZCREATE u uuid:float32 1 123e4567-e89b-12d3-a456-426614174000 2 123e4567-e89b-12d3-a456-426614174000", ":1\r\n", ""},
		{"ZSCORE u 123e4567-e89b-12d3-a456-426614174000", "$1\r\n2\r\n", ",2\r\n"},
		// A score float32 cannot hold widens the key.
		{"ZADD u 0.1 00000000-0000-0000-0000-000000000001", ":1\r\n", ""},
		{"OBJECT ENCODING u", "$12\r\nuuid:float64\r\n", ""},
		{"ZSCORE u 00000000-0000-0000-0000-000000000001", "$3\r\n0.1\r\n", ",0.1\r\n"},
		// DEL drops a declaration.
		{"ZCREATE later int64:float32", ":0\r\n", ""},
		{"DEL later", ":0\r\n", ""},
		{"ZADD later 1 x", ":1\r\n", ""},
		{"OBJECT ENCODING later", "$8\r\nstandard\r\n", ""},
		{"ZCREATE k nolayout", "-ERR unknown layout 'nolayout' (want one of standard, int32:float32, int32:float64, int64:float32, int64:float64, uuid:float32, uuid:float64)\r\n", ""},
		{"ZCREATE k int32:float32 1", "-ERR syntax error\r\n", ""},
		{"ZCREATE k int32:float32 x 1", "-ERR value is not a valid float\r\n", ""},
		{"ZCREATE k", "-ERR wrong number of arguments for 'zcreate' command\r\n", ""},
	})
}
