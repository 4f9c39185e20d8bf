//go:build linux && !(amd64 || arm64)

package wal

// aioDatasync: the plain fdatasync on this machine (aiosync_linux.go).
func aioDatasync(fd int) (done bool, err error) { return false, nil }

// aioProbe: nil, as no AIO is tried on this machine.
func aioProbe() error { return nil }
