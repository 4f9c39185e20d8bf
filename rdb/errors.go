package rdb

import (
	"errors"
	"fmt"
)

// The package's errors. Every decoding failure wraps ErrCorrupt or
// ErrChecksum; callers translate them (RESTORE replies Redis's texts).
var (
	// ErrChecksum: a DUMP payload shorter than its footer, of an RDB
	// version newer than Version, or whose CRC64 does not match; an RDB
	// file whose checksum does not match.
	ErrChecksum = errors.New("rdb: version or checksum are wrong")
	// ErrCorrupt: bytes that are not a valid encoding (truncated, lengths
	// out of range, bad listpacks, NaN scores, duplicate members...).
	ErrCorrupt = errors.New("rdb: bad data format")
	// ErrNotZSet: a valid value of a type other than a sorted set.
	ErrNotZSet = errors.New("rdb: not a sorted set")
	// ErrUnsupported: a type or opcode this package cannot skip (a module
	// value in the pre-release format, a function in the pre-release
	// format, a type newer than RDB 12).
	ErrUnsupported = errors.New("rdb: unsupported encoding")
)

func errf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}
