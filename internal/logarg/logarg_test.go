package logarg

import "testing"

func TestValue(t *testing.T) {
	args := []interface{}{"peer", "n2", "error", "boom", "dangling"}
	for _, c := range []struct {
		key  string
		want interface{}
	}{{"peer", "n2"}, {"error", "boom"}, {"dangling", nil}, {"absent", nil}} {
		if got := Value(args, c.key); got != c.want {
			t.Errorf("Value(%q) = %v, want %v", c.key, got, c.want)
		}
	}
}
