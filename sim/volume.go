package sim

import (
	"io/fs"
	"syscall"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/simfs"
)

// SimfsFilesystem is the default FilesystemFactory: a simfs instance whose
// MkdirTemp names and crash outcomes come from the run's decisions and whose
// injected errors come from the fault plan.
func SimfsFilesystem(cfg FilesystemConfig) Filesystem {
	fs := simfs.New(simfs.Options{
		Dev:      cfg.Dev,
		Now:      cfg.Now,
		Rand:     cfg.Chooser,
		Injector: injector{inject: cfg.Inject},
	})
	return &SimfsVolume{FS: fs}
}

// SimfsVolume adapts a *simfs.FS to Filesystem.
type SimfsVolume struct{ FS *simfs.FS }

// NameGeneration is simfs's: it changes whenever a name is created,
// removed or moved, or the volume crashes.
func (v *SimfsVolume) NameGeneration() uint64 { return v.FS.NameGeneration() }

// NameGeneration returns the volume's name generation, when its filesystem
// keeps one (simfs does): while it is unchanged, no name on the volume was
// created, removed or moved, so a hook that watches files by name may skip
// looking again.
func (v *Volume) NameGeneration() (uint64, bool) {
	if v.simFS != nil {
		return v.simFS.NameGeneration(), true // the default's, without an interface call
	}
	if v.versioned == nil {
		return 0, false
	}
	return v.versioned.NameGeneration(), true
}

// Generations returns the volume's name and data generations, when its
// filesystem is the default simfs: while both are unchanged, no file's
// data and no name changed, so a checker that reads files by name after
// each step may skip reading again. Other filesystems report false (check
// always).
func (v *Volume) Generations() (names, data uint64, ok bool) {
	if v.simFS != nil {
		return v.simFS.NameGeneration(), v.simFS.DataGeneration(), true
	}
	return 0, 0, false
}

// nameVersioned is a Filesystem that keeps a name generation. AddVolume
// asserts it once: asserting it at every step cost 2% of a campaign.
type nameVersioned interface{ NameGeneration() uint64 }

// View implements Filesystem.
func (v *SimfsVolume) View(uid uint32) lease.FS { return v.FS.View(uid) }

// HarnessView implements Filesystem.
func (v *SimfsVolume) HarnessView(uid uint32) lease.FS { return v.FS.HarnessView(uid) }

// CloseAll implements Filesystem.
func (v *SimfsVolume) CloseAll(view lease.FS) { v.FS.CloseAll(view) }

// MkdirAll implements Filesystem.
func (v *SimfsVolume) MkdirAll(path string, perm fs.FileMode, uid uint32) {
	v.FS.MkdirAll(path, perm, uid)
}

// Hash implements Filesystem.
func (v *SimfsVolume) Hash() uint64 { return v.FS.Hash() }

// StateHash is Hash, reused while the filesystem is unchanged (the state
// key's part, sim/statekey.go).
func (v *SimfsVolume) StateHash() uint64 { return v.FS.StateHash() }

// powerLossModes are the simfs crash modes a power loss draws from, mildest
// first (so the boring answer 0 keeps exactly the synced state).
var powerLossModes = []simfs.CrashMode{
	simfs.CrashSyncedOnly, simfs.CrashMetadataPrefix, simfs.CrashRandomSubset, simfs.CrashTornData,
}

// PowerLoss implements Filesystem.
func (v *SimfsVolume) PowerLoss(choose *Decisions) string {
	mode := powerLossModes[choose.Intn(len(powerLossModes))]
	v.FS.Crash(mode, choose)
	return mode.String()
}

// injector feeds simfs's injection point from the world's fault plan.
type injector struct {
	inject func(kind, path string) error
}

func (in injector) Inject(op simfs.Op) error {
	if in.inject == nil {
		return nil
	}
	err := in.inject(op.Kind.String(), op.Path)
	if err == nil {
		return nil
	}
	if _, ok := err.(syscall.Errno); !ok {
		panic("sim: injected FS error is not an errno: " + err.Error())
	}
	return err
}

func (in injector) String() string { return "(sim fault plan: fserror)" }
