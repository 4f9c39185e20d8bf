package cluster

import (
	"errors"
	"testing"
)

// A join that failed only because seeds are not up yet is expected at
// start; one where a seed answered and the exchange failed (another
// gossip key) is what the operator must hear about.
func TestOnlyRefused(t *testing.T) {
	for _, c := range []struct {
		err  string
		want bool
	}{
		{"1 error occurred:\n\t* Failed to join 127.0.0.1:1: dial tcp 127.0.0.1:1: connect: connection refused\n\n", true},
		{"2 errors occurred:\n\t* failed to join 10.0.0.1:7946: dial tcp 10.0.0.1:7946: i/o timeout\n\t* failed to join goblin3:7946: lookup goblin3: no such host\n", true},
		{"2 errors occurred:\n\t* failed to join 127.0.0.1:23201: no installed keys could decrypt the message\n\t* failed to join 127.0.0.1:23209: dial tcp 127.0.0.1:23209: connect: connection refused\n", false},
		{"1 error occurred:\n\t* failed to join 127.0.0.1:23201: EOF\n", false},
	} {
		if got := onlyRefused(errors.New(c.err)); got != c.want {
			t.Errorf("onlyRefused(%q) = %v", c.err, got)
		}
	}
}
