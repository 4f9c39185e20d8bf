//go:build !unix

package wire

import "errors"

// RawReads reports whether this system's Framer can read from a socket's
// descriptor (BeginRaw): not on this one.
const RawReads = false

func readFD(int, []byte) (int, bool, error) {
	return 0, false, errors.New("reading a descriptor is not supported on this system")
}
