package wal

import (
	"os"
	"syscall"
)

// datasync flushes f's data (and the size, which fdatasync includes) to
// stable storage, without the timestamps fsync would also write.
func datasync(f *os.File) error { return fdatasync(f, false) }

// datasyncBeside is datasync through Linux AIO where it can
// (aiosync_linux.go): the thread is not held while the disk syncs.
func datasyncBeside(f *os.File) error { return fdatasync(f, true) }

func fdatasync(f *os.File, async bool) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		if async {
			if done, err := aioDatasync(int(fd)); done {
				serr = err
				return
			}
		}
		for {
			serr = syscall.Fdatasync(int(fd))
			if serr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return serr
}
