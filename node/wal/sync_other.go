//go:build !linux

package wal

import "os"

func datasync(f *os.File) error { return f.Sync() }

// datasyncBeside is datasync (an asynchronous sync is Linux's).
func datasyncBeside(f *os.File) error { return f.Sync() }

// aioProbe: nil, as no AIO is tried on this system.
func aioProbe() error { return nil }
