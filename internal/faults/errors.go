package faults

import (
	"errors"
	"fmt"
)

// ErrUnsupported: the machine does not allow this fault (no iptables, no
// cgroup match, no permission). Tests skip on it.
var ErrUnsupported = errors.New("fault injection unsupported here")

// unsupported wraps err (or a description) as ErrUnsupported.
func unsupported(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, args...))
}
