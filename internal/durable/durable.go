// Package durable writes files so that what is written survives a crash
// or power loss whole or not at all: the data is synced before the name
// points to it, and the directory after.
package durable

import (
	"os"
	"path/filepath"
)

// SyncDir makes the names in dir (files created, renamed or removed)
// durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// ReplaceFile writes data to path through a temporary file beside it
// (mode perm), synced and renamed into place, then syncs the directory:
// a reader, or path after a crash, holds the old content or the new,
// never part of either. The temporary file is removed when it fails.
func ReplaceFile(path string, data []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return SyncDir(filepath.Dir(path))
}
