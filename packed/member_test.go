package packed

import "testing"

func TestKindOf(t *testing.T) {
	if kindOf[int32]() != MemberInt32 || kindOf[int64]() != MemberInt64 || kindOf[uuid]() != MemberUUID || kindOf[sref]() != MemberBytes {
		t.Fatal("kindOf")
	}
}

func TestPackedMemberCodec(t *testing.T) {
	for _, v := range []int32{0, -1, 1 << 30, -1 << 31} {
		if got := getPacked[int32](appendPacked[int32](nil, v)); got != v {
			t.Errorf("int32 %d -> %d", v, got)
		}
	}
	for _, v := range []int64{0, -1, 1 << 62, -1 << 63} {
		if got := getPacked[int64](appendPacked[int64](nil, v)); got != v {
			t.Errorf("int64 %d -> %d", v, got)
		}
	}
	u := uuid{0x0123456789abcdef, 0xfedcba9876543210}
	if got := getPacked[uuid](appendPacked[uuid](nil, u)); got != u {
		t.Errorf("uuid %x -> %x", u, got)
	}
	if cmpPacked(&uuid{1, 0}, &uuid{0, ^uint64(0)}) <= 0 || cmpPacked(&uuid{1, 2}, &uuid{1, 3}) >= 0 {
		t.Error("UUIDs must order by their bytes")
	}
}
