package raftfsm

// CommandCount returns how many client commands the encoded entry data
// carries without decoding it: one for OpCommand, the count for OpBatch
// and OpMulti (read from the header), their sum for a group, none for the
// other ops or for bytes that are not an entry. It is for metrics
// (commands per fsync).
func CommandCount(data []byte) int {
	if isGroup(data) {
		_, n := Counts(data)
		return n
	}
	d := &decoder{b: data}
	v := d.byte()
	if v != Version && v != VersionProposal {
		return 0
	}
	op := Op(d.byte())
	if v == VersionProposal {
		d.uint64()
		d.uint64()
	}
	switch op {
	case OpCommand:
		return 1
	case OpBatch, OpMulti:
	default:
		return 0
	}
	d.byte() // proto
	d.byte() // flags
	d.varint()
	if op == OpMulti {
		d.uvarint() // watch index
		for n := d.uvarint(); n > 0 && d.err == nil; n-- {
			d.byte() // db
			flags := d.byte()
			d.bytes()
			if flags&watchHasIndex != 0 {
				d.uvarint()
			}
		}
	}
	n := d.uvarint()
	if d.err != nil {
		return 0
	}
	return int(n)
}
