package campaign

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/leasetest"
	"github.com/leasekit/leasekit/simfs"
)

// The lease operation mix: one process acquires and releases the lease of
// one namespace, Rounds times, through package lease on a given
// filesystem. Run on simfs and on the real OS (osenv) it gives the sim/real
// ratio of the same engine code; run through a counting wrapper it gives
// the fsyncs of one acquire and one release, split into file and directory
// fsyncs.

// FsyncCount is a number of File.Sync calls per operation, split by what
// was synced.
type FsyncCount struct {
	File, Directory float64
}

// Total is all fsyncs.
func (c FsyncCount) Total() float64 { return c.File + c.Directory }

// OpMixBench is the operation mix on one filesystem.
type OpMixBench struct {
	// FS names the filesystem ("simfs", "osenv /tmp").
	FS     string
	Rounds int
	// Elapsed is the wall time of the timed pass: Rounds acquire/release
	// pairs straight on the filesystem, no wrapper.
	Elapsed time.Duration
	// CPU is the process CPU time of the timed pass.
	CPU time.Duration
	// FirstAcquire is the fsyncs of the first acquire, which also makes
	// the namespace's directories and epoch file.
	FirstAcquire FsyncCount
	// Acquire and Release are the fsyncs of one later acquire and release
	// (averaged over the counted rounds after the first).
	Acquire, Release FsyncCount
	// AcquireCalls and ReleaseCalls are the FS and File calls of one.
	AcquireCalls, ReleaseCalls float64
	// AcquireSyncs and ReleaseSyncs name what one later acquire and release
	// synced, in order, relative to the namespace, IDs replaced by <id>.
	AcquireSyncs, ReleaseSyncs []string
}

// PairsPerSecond is acquire/release pairs per second of the timed pass.
func (b OpMixBench) PairsPerSecond() float64 { return perSecond(float64(b.Rounds), b.Elapsed) }

// PairsPerCPUSecond is acquire/release pairs per second of process CPU.
func (b OpMixBench) PairsPerCPUSecond() float64 { return perSecond(float64(b.Rounds), b.CPU) }

// opMixCountedRounds is how many rounds the counting pass runs: each round
// after the first does the same calls, so a few are enough.
const opMixCountedRounds = 4

// opMixUID is the uid the simfs namespace belongs to: the identity's.
var opMixUID = uint32(leasetest.UID)

// BenchOpMixSimfs runs the operation mix on a fresh simfs.
func BenchOpMixSimfs(rounds int) (OpMixBench, error) {
	return BenchOpMix("simfs", newOpMixSimfs(), "/bench", rounds)
}

// newOpMixSimfs returns a fresh simfs with /bench, seen as opMixUID.
func newOpMixSimfs() lease.FS {
	fsys := simfs.New(simfs.Options{Dev: 9})
	fsys.MkdirAll("/bench", 0o755, opMixUID)
	return fsys.View(opMixUID)
}

// BenchOpMix runs the operation mix on fsys in two namespaces under dir:
// a counting pass through a recording wrapper, then the timed pass.
func BenchOpMix(name string, fsys lease.FS, dir string, rounds int) (OpMixBench, error) {
	bench := OpMixBench{FS: name, Rounds: rounds}
	if err := bench.count(fsys, path.Join(dir, "ns-count")); err != nil {
		return bench, err
	}
	manager, err := opMixManager(fsys, path.Join(dir, "ns-time"))
	if err != nil {
		return bench, err
	}
	start, cpuBefore := time.Now(), processCPU()
	for round := range rounds {
		if err := opMixRound(manager); err != nil {
			return bench, fmt.Errorf("bench: %s: timed round %d: %w", name, round, err)
		}
	}
	bench.Elapsed, bench.CPU = time.Since(start), processCPU()-cpuBefore
	return bench, nil
}

// count runs opMixCountedRounds rounds through a HookFS that counts syncs.
func (b *OpMixBench) count(fsys lease.FS, namespace string) error {
	hooks := leasetest.NewHookFS(fsys)
	var mutex sync.Mutex
	var syncs []string
	var counts FsyncCount
	hooks.After(func(op leasetest.Op, err error) {
		if op.Name != "Sync" || err != nil {
			return
		}
		mutex.Lock()
		defer mutex.Unlock()
		synced := opMixName(op.Paths[0], namespace)
		if info, err := fsys.Lstat(op.Paths[0]); err == nil && info.Mode.IsDir() {
			counts.Directory++
			synced += "/"
		} else {
			counts.File++
		}
		synced = opMixTemp.ReplaceAllString(synced, ".receiver.prepare-<id>")
		syncs = append(syncs, opMixIDs.ReplaceAllString(synced, "<id>"))
	})
	manager, err := opMixManager(hooks, namespace)
	if err != nil {
		return err
	}
	take := func() (FsyncCount, []string, int) {
		mutex.Lock()
		defer mutex.Unlock()
		taken, names, calls := counts, syncs, len(hooks.Ops())
		counts, syncs = FsyncCount{}, nil
		hooks.ResetOps()
		return taken, names, calls
	}
	for round := range opMixCountedRounds {
		generation, err := opMixAcquire(manager)
		if err != nil {
			return fmt.Errorf("bench: %s: counted round %d: %w", b.FS, round, err)
		}
		acquire, acquireSyncs, acquireCalls := take()
		if err := opMixRelease(manager, generation); err != nil {
			return fmt.Errorf("bench: %s: counted round %d: %w", b.FS, round, err)
		}
		release, releaseSyncs, releaseCalls := take()
		if round == 0 {
			b.FirstAcquire = acquire
			continue
		}
		b.Acquire.File += acquire.File / (opMixCountedRounds - 1)
		b.Acquire.Directory += acquire.Directory / (opMixCountedRounds - 1)
		b.Release.File += release.File / (opMixCountedRounds - 1)
		b.Release.Directory += release.Directory / (opMixCountedRounds - 1)
		b.AcquireCalls += float64(acquireCalls) / (opMixCountedRounds - 1)
		b.ReleaseCalls += float64(releaseCalls) / (opMixCountedRounds - 1)
		b.AcquireSyncs, b.ReleaseSyncs = acquireSyncs, releaseSyncs
	}
	return nil
}

// opMixName renders a synced path relative to the namespace: "ns",
// "ns/NAME", or "parent" for the namespace's parent directory.
func opMixName(name, namespace string) string {
	switch {
	case name == namespace:
		return "ns"
	case strings.HasPrefix(name, namespace+"/"):
		return "ns" + strings.TrimPrefix(name, namespace)
	case name == path.Dir(namespace):
		return "parent"
	default:
		return name
	}
}

// opMixIDs matches the IDs and numbers in synced names, opMixTemp the
// random suffix of a MkdirTemp name (digits in simfs, letters on Linux).
var opMixTemp = regexp.MustCompile(`\.receiver\.prepare-[0-9A-Za-z]+`)
var opMixIDs = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9]+`)

func opMixManager(fsys lease.FS, namespace string) (*lease.Manager, error) {
	return lease.NewManager(lease.Config{
		Namespace: namespace, RootID: "bench-root", FS: fsys, Clock: leasetest.NewClock(),
		Inspector: leasetest.NewInspector(leasetest.Identity(1)), IDs: leasetest.NewIDs(),
	})
}

var opMixRequest = lease.AcquireRequest{SessionID: "bench-session", SessionFile: "/bench/session.jsonl"}

func opMixRound(manager *lease.Manager) error {
	generation, err := opMixAcquire(manager)
	if err != nil {
		return err
	}
	return opMixRelease(manager, generation)
}

func opMixAcquire(manager *lease.Manager) (string, error) {
	result, err := manager.Acquire(context.Background(), opMixRequest)
	if err != nil {
		return "", err
	}
	if result.Kind != lease.Acquired {
		return "", fmt.Errorf("acquire: %v %+v", result.Kind, result.Refusal)
	}
	return result.Owner.Generation, nil
}

func opMixRelease(manager *lease.Manager, generation string) error {
	result, err := manager.Release(context.Background(), generation)
	if err != nil {
		return err
	}
	if result.Kind != lease.Released {
		return fmt.Errorf("release: %v %s %+v", result.Kind, result.Why, result.Refusal)
	}
	return nil
}
