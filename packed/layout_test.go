package packed

import "testing"

func TestLayoutNames(t *testing.T) {
	for _, l := range allLayouts {
		if p, err := ParseLayout(l.String()); err != nil || p != l {
			t.Errorf("%v does not round trip", l)
		}
	}
	if _, err := ParseLayout("int8:float16"); err != ErrLayout {
		t.Error("unknown layout accepted")
	}
	if Int32Float32.widenMember() != Int64Float32 || UUIDFloat32.widenScore() != UUIDFloat64 || Standard.Packed() {
		t.Error("widening table")
	}
}
