//go:build !linux

package wal

type window struct{}

func (l *Log) copyMapped(s *segment, b []byte, off int64) (bool, error) { return false, nil }

func (s *segment) unmap() {}
