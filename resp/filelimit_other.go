//go:build !unix

package resp

import "errors"

// raiseFileLimit: this system has no RLIMIT_NOFILE to read.
func raiseFileLimit(need uint64) (uint64, error) {
	return 0, errors.New("the open files limit cannot be read on this system")
}
