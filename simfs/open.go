package simfs

import "github.com/leasekit/leasekit/lease"

// OpenNames returns the names of the files that v (a value returned by
// View) has open now, in no particular order: the simulator's "a failed
// call leaves no file of its own open" oracle reads it.
func (f *FS) OpenNames(v lease.FS) []string {
	vw, ok := v.(*view)
	if !ok || vw.fs != f {
		panic("simfs: OpenNames of a view from another FS")
	}
	vw.forgetStale()
	names := make([]string, len(vw.open))
	for i, fl := range vw.open {
		names[i] = fl.name
	}
	return names
}

// OpenCount returns how many files v has open now.
func (f *FS) OpenCount(v lease.FS) int {
	vw, ok := v.(*view)
	if !ok || vw.fs != f {
		panic("simfs: OpenCount of a view from another FS")
	}
	vw.forgetStale()
	return len(vw.open)
}
