package wal

import (
	"fmt"
	"os"
	"time"
)

// Op names a file operation of the log, for Options.Inject.
type Op string

// The operations Options.Inject is asked about.
const (
	OpWrite    Op = "write"    // appending a batch to the active segment
	OpSync     Op = "sync"     // fdatasync of the active segment
	OpTruncate Op = "truncate" // cutting a failed batch, or a suffix
	OpCreate   Op = "create"   // creating a segment
	OpManifest Op = "manifest" // rewriting the manifest
	OpPrealloc Op = "prealloc" // zero-filling the active segment ahead
)

func (l *Log) inject(op Op) error {
	if l.opts.Inject == nil {
		return nil
	}
	return l.opts.Inject(op)
}

// writeAt writes b at off in s, or, when Options.Inject fails the write,
// writes half of it and returns the injected error: a disk that fills up
// in the middle of a batch.
func (l *Log) writeAt(s *segment, b []byte, off int64) error {
	if err := l.inject(OpWrite); err != nil {
		s.f.WriteAt(b[:len(b)/2], off)
		return err
	}
	if ok, err := l.copyMapped(s, b, off); ok || err != nil {
		return err
	}
	_, err := s.f.WriteAt(b, off)
	return err
}

func (l *Log) sync(f *os.File) error {
	if err := l.inject(OpSync); err != nil {
		return err
	}
	sync := datasync
	if l.opts.SyncBeside {
		sync = datasyncBeside
	}
	if l.opts.OnSync == nil {
		return sync(f)
	}
	start := time.Now()
	err := sync(f)
	l.opts.OnSync(time.Since(start))
	return err
}

// undoAppend cuts whatever part of a failed batch reached s (its valid
// content ends at s.size) and makes the cut durable, so the refused batch
// can never reappear after a crash. If that fails too, the segment is
// left to repair before the next append.
func (l *Log) undoAppend(s *segment) error {
	err := l.inject(OpTruncate)
	if err == nil {
		s.unmap()
		err = s.f.Truncate(s.size)
	}
	if err == nil {
		s.alloc = 0
	}
	if err == nil {
		err = datasync(s.f)
	}
	if err != nil {
		l.repair = s
		return fmt.Errorf("wal: cutting a failed append: %w", err)
	}
	l.repair = nil
	return nil
}

// repairAppend retries undoAppend before an append, after one failed.
func (l *Log) repairAppend() error {
	if l.repair == nil {
		return nil
	}
	return l.undoAppend(l.repair)
}
