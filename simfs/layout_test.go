package simfs

import (
	"testing"
	"unsafe"
)

// TestStructSizes keeps the per-create and per-open objects inside the
// malloc size classes their field order was chosen for.
func TestStructSizes(t *testing.T) {
	if got := unsafe.Sizeof(inode{}); got > 192 {
		t.Errorf("inode is %d bytes, want at most 192", got)
	}
	if got := unsafe.Sizeof(file{}); got > 64 {
		t.Errorf("file is %d bytes, want at most 64", got)
	}
}
