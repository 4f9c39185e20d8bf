package wal

import (
	"os"
	"syscall"
)

// datasync flushes f's data (and the size, which fdatasync includes) to
// stable storage, without the timestamps fsync would also write.
func datasync(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
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
