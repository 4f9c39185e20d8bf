package rdb

import "fmt"

// skip reads past a value of type t without building it: strings are read
// (compressed ones not expanded), counts bound only loops, never
// allocations.
func (s *source) skip(t Type) error {
	switch t {
	case TypeString, TypeHashZipmap, TypeListZiplist, TypeSetIntset, TypeZSetZiplist,
		TypeHashZiplist, TypeHashListpack, TypeZSetListpack, TypeSetListpack:
		return s.skipStr()
	case TypeList, TypeSet, TypeHash, TypeListQuicklist, TypeListQuicklist2:
		n, err := s.length()
		if err != nil {
			return err
		}
		per := 1
		if t == TypeHash {
			per = 2
		}
		for range n {
			if t == TypeListQuicklist2 {
				if _, err := s.length(); err != nil { // container kind
					return err
				}
			}
			for range per {
				if err := s.skipStr(); err != nil {
					return err
				}
			}
		}
		return nil
	case TypeZSet, TypeZSet2:
		n, err := s.length()
		if err != nil {
			return err
		}
		for range n {
			if err := s.skipStr(); err != nil {
				return err
			}
			if t == TypeZSet2 {
				_, err = s.read(8)
			} else {
				_, err = s.textDouble()
			}
			if err != nil {
				return err
			}
		}
		return nil
	case TypeStreamListpacks, TypeStreamListpack2, TypeStreamListpack3:
		return s.skipStream(t)
	case TypeModule2:
		if _, err := s.length(); err != nil { // module id
			return err
		}
		return s.skipModuleValue()
	}
	return fmt.Errorf("%w: value type %d", ErrUnsupported, t)
}

// skipStream reads past a stream: its listpacks, its metadata, its
// consumer groups with their pending entries and consumers.
func (s *source) skipStream(t Type) error {
	lens := func(k int) error {
		for range k {
			if _, err := s.length(); err != nil {
				return err
			}
		}
		return nil
	}
	raw := func(k int) error { _, err := s.read(k); return err }
	nodes, err := s.length()
	if err != nil {
		return err
	}
	for range nodes {
		if err := s.skipStr(); err != nil { // master ID
			return err
		}
		if err := s.skipStr(); err != nil { // listpack
			return err
		}
	}
	meta := 3 // length, last ID
	if t >= TypeStreamListpack2 {
		meta += 5 // first ID, max deleted ID, entries added
	}
	if err := lens(meta); err != nil {
		return err
	}
	groups, err := s.length()
	if err != nil {
		return err
	}
	for range groups {
		if err := s.skipStr(); err != nil {
			return err
		}
		gl := 2 // last delivered ID
		if t >= TypeStreamListpack2 {
			gl++ // entries read
		}
		if err := lens(gl); err != nil {
			return err
		}
		pel, err := s.length()
		if err != nil {
			return err
		}
		for range pel {
			if err := raw(16 + 8); err != nil { // ID, delivery time
				return err
			}
			if err := lens(1); err != nil { // delivery count
				return err
			}
		}
		consumers, err := s.length()
		if err != nil {
			return err
		}
		for range consumers {
			if err := s.skipStr(); err != nil {
				return err
			}
			times := 8
			if t >= TypeStreamListpack3 {
				times = 16
			}
			if err := raw(times); err != nil {
				return err
			}
			cpel, err := s.length()
			if err != nil {
				return err
			}
			for range cpel {
				if err := raw(16); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// skipModuleValue reads past a module value saved with annotations: typed
// items up to an EOF opcode.
func (s *source) skipModuleValue() error {
	for {
		op, err := s.length()
		if err != nil {
			return err
		}
		switch op {
		case modEOF:
			return nil
		case modSInt, modUInt:
			_, err = s.length()
		case modFloat:
			_, err = s.read(4)
		case modDouble:
			_, err = s.read(8)
		case modString:
			err = s.skipStr()
		default:
			err = errf("module value opcode %d", op)
		}
		if err != nil {
			return err
		}
	}
}
