package raftfsm

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/goblindb/goblin/acl"
)

// The snapshot's ACL section:
//
//	[has users u8] then, if 1:
//	  [users uvarint] { [name] [rules uvarint] {[rule]} [selectors uvarint] { [rules uvarint] {[rule]} } }
//	[configs uvarint] { [node] [digest] }
//
// where [x] is a uvarint length and the bytes. Users are stored as the
// rules that rebuild them exactly (acl.UserState).

func (s aclState) encode(dst []byte) []byte {
	if s.users == nil {
		dst = append(dst, 0)
	} else {
		dst = append(dst, 1)
		states := s.users.State()
		dst = binary.AppendUvarint(dst, uint64(len(states)))
		for _, u := range states {
			dst = appendBytes(dst, []byte(u.Name))
			dst = appendStrings(dst, u.Rules)
			dst = binary.AppendUvarint(dst, uint64(len(u.Selectors)))
			for _, sel := range u.Selectors {
				dst = appendStrings(dst, sel)
			}
		}
	}
	configs := s.sortedConfigs()
	dst = binary.AppendUvarint(dst, uint64(len(configs)))
	for _, c := range configs {
		dst = appendBytes(dst, []byte(c[0]))
		dst = appendBytes(dst, []byte(c[1]))
	}
	return dst
}

func appendStrings(dst []byte, ss []string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(ss)))
	for _, s := range ss {
		dst = appendBytes(dst, []byte(s))
	}
	return dst
}

// maxACLSnapshotItem bounds any count or length in the section, so a
// corrupt snapshot cannot make a restore allocate without bound.
const maxACLSnapshotItem = 1 << 26

// snapReader reads the section's fields; the first error sticks.
type snapReader struct {
	r   *bufio.Reader
	err error
}

func (sr *snapReader) uvarint() uint64 {
	if sr.err != nil {
		return 0
	}
	v, err := binary.ReadUvarint(sr.r)
	if err != nil || v > maxACLSnapshotItem {
		sr.err = fmt.Errorf("%w: ACL section", ErrCorrupt)
		return 0
	}
	return v
}

func (sr *snapReader) str() string {
	n := sr.uvarint()
	if sr.err != nil {
		return ""
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(sr.r, b); err != nil {
		sr.err = fmt.Errorf("%w: ACL section", ErrCorrupt)
		return ""
	}
	return string(b)
}

func (sr *snapReader) strs() []string {
	n := sr.uvarint()
	var out []string
	for i := uint64(0); i < n && sr.err == nil; i++ {
		out = append(out, sr.str())
	}
	return out
}

func readACLSection(r *bufio.Reader) (aclState, error) {
	sr := &snapReader{r: r}
	var st aclState
	has, err := r.ReadByte()
	if err != nil || has > 1 {
		return st, fmt.Errorf("%w: ACL section", ErrCorrupt)
	}
	if has == 1 {
		n := sr.uvarint()
		var states []acl.UserState
		for i := uint64(0); i < n && sr.err == nil; i++ {
			u := acl.UserState{Name: sr.str(), Rules: sr.strs()}
			m := sr.uvarint()
			for j := uint64(0); j < m && sr.err == nil; j++ {
				u.Selectors = append(u.Selectors, sr.strs())
			}
			states = append(states, u)
		}
		if sr.err != nil {
			return st, sr.err
		}
		us, err := acl.Restore(states)
		if err != nil {
			return st, fmt.Errorf("%w: ACL section: %v", ErrCorrupt, err)
		}
		st.users = us
	}
	n := sr.uvarint()
	for i := uint64(0); i < n && sr.err == nil; i++ {
		node, digest := sr.str(), sr.str()
		st.record(node, digest)
	}
	return st, sr.err
}

// vanished returns the names in old that are not in new.
func vanished(old, new *acl.Users) []string {
	if old == nil {
		return nil
	}
	var out []string
	for _, n := range old.Names() {
		if new.Get(n) == nil {
			out = append(out, n)
		}
	}
	return out
}
