package tlsconf

import (
	"context"
	"os"
	"time"
)

// stamp identifies a file's content cheaply: a rewrite changes its
// modification time or size, a rename over it its inode.
type stamp struct {
	mtime int64
	size  int64
	ino   uint64
	dev   uint64
}

func statFile(path string) (stamp, error) {
	fi, err := os.Stat(path) // follows symbolic links, as reads do
	if err != nil {
		return stamp{}, err
	}
	s := stamp{mtime: fi.ModTime().UnixNano(), size: fi.Size()}
	s.ino, s.dev = fileID(fi)
	return s, nil
}

// stat returns the stamps of the files now; a file that cannot be
// stat'ed gets a zero stamp, which differs from any it had.
func (r *Reloader) stat() [3]stamp {
	var out [3]stamp
	for i, p := range []string{r.files.Cert, r.files.Key, r.files.CA} {
		if p != "" {
			out[i], _ = statFile(p)
		}
	}
	return out
}

// Watch checks the files every interval until ctx is done, and reloads
// them when one changed. A reload that fails is reported to onErr (which
// may be nil) once per change, and the material in use stays; the next
// change is tried again. Watch blocks: run it in its own goroutine.
func (r *Reloader) Watch(ctx context.Context, every time.Duration, onErr func(error)) {
	t := time.NewTicker(every)
	defer t.Stop()
	var failed [3]stamp // the stamps of the last failed attempt
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		r.check(&failed, onErr)
	}
}

// check is one look of Watch at the files: it reloads them if they
// changed since the material in use was read and since the last failed
// attempt (*failed), and reports a failure once.
func (r *Reloader) check(failed *[3]stamp, onErr func(error)) {
	now := r.stat()
	if now == r.cur.Load().stamps || now == *failed {
		return
	}
	if err := r.Reload(); err != nil {
		*failed = now
		if onErr != nil {
			onErr(err)
		}
		return
	}
	*failed = [3]stamp{}
}
