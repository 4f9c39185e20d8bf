// Package logarg reads the key-value lists that hclog's logging methods
// take, for the loggers that wrap a library's logger and decide a line's
// level by what it says (Raft's, its transport's).
package logarg

// Value is the value given for key in args (key, value, key, value, ...),
// or nil when key is not among them.
func Value(args []interface{}, key string) interface{} {
	for i := 0; i+1 < len(args); i += 2 {
		if k, ok := args[i].(string); ok && k == key {
			return args[i+1]
		}
	}
	return nil
}
