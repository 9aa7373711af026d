package leasework

// Slow inspectors. Inspect takes no lock: it looks at receiver.lock, reads
// owner.json, and when owner.json is missing looks at receiver.lock again,
// to tell a directory being made or removed (look again) from one left
// without an owner (corrupt). A reader descheduled between those looks
// meets whatever the holders did meanwhile: a release and new acquires,
// whose new receiver.lock may get the old directory's inode number back
// (simfs, like ext4, reuses the lowest free number). Only the full identity,
// birth time included, tells that directory from the one Inspect first
// saw; by device and inode alone Inspect reports "receiver.lock exists
// without a complete owner.json", a corrupt state that never existed,
// which the model refuses (and an operator acting on it would force the
// live new owner).
//
// So some inspects are drawn slow: before each look at receiver.lock or at
// owner.json such an inspect may stall for up to slowInspectStallMax of
// virtual time while the other processes run. The probe
// lease-inspect-reused-inode fires when a second look finds a different
// directory on the first one's device and inode number.

import (
	"context"
	"time"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/sim"
)

// Draws of the slow inspectors.
const (
	slowInspectChance      = 0.5 // an inspect is slow
	slowInspectStallChance = 0.8 // a slow inspect stalls before one look
	slowInspectStallMax    = 60 * time.Millisecond
)

// slowInspect is one slow inspect in progress: what its first look at
// receiver.lock saw.
type slowInspect struct {
	first  lease.FileInfo
	looked bool
}

// beginSlowInspect draws whether p's coming inspect is slow; endSlowInspect
// ends it.
func (lw *leaseWorld) beginSlowInspect(p *sim.Proc) {
	if lw.slowInspects == nil {
		lw.slowInspects = map[*sim.Proc]*slowInspect{}
	}
	if lw.world.Decisions().Chance(slowInspectChance) {
		lw.slowInspects[p] = &slowInspect{}
	}
}

func (lw *leaseWorld) endSlowInspect(p *sim.Proc) { delete(lw.slowInspects, p) }

// Lstat stalls a slow inspect before its looks and notes what they see.
func (f *leaseFS) Lstat(name string) (lease.FileInfo, error) {
	if len(f.lw.slowInspects) == 0 { // the common case: no slow inspect runs
		return f.FS.Lstat(name)
	}
	slow := f.lw.slowInspects[f.p]
	if slow == nil || (name != leaseReceiverPath && name != leaseOwnerPath) {
		return f.FS.Lstat(name)
	}
	d := f.lw.world.Decisions()
	if d.Chance(slowInspectStallChance) {
		f.lw.world.Probe("lease-inspect-stalled")
		stall := time.Duration(1+d.Intn(int(slowInspectStallMax/time.Millisecond))) * time.Millisecond
		_ = f.p.Clock().Sleep(context.Background(), stall)
	}
	info, err := f.FS.Lstat(name)
	if name == leaseReceiverPath && err == nil {
		f.lw.noteInspectLook(slow, info)
	}
	return info, err
}

// noteInspectLook records a slow inspect's look at receiver.lock and fires
// the reuse probe when a later look finds another directory on the first
// one's inode number.
func (lw *leaseWorld) noteInspectLook(slow *slowInspect, info lease.FileInfo) {
	if !slow.looked {
		slow.first, slow.looked = info, true
		return
	}
	if info.Dev == slow.first.Dev && info.Ino == slow.first.Ino && info.BirthNs != slow.first.BirthNs {
		lw.world.Probe("lease-inspect-reused-inode")
	}
}
