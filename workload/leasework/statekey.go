package leasework

import (
	"github.com/leasekit/leasekit/sim"
)

// stateKey is the lease workload's part of the world's state key
// (sim.World.SetStateKey): every ledger the invariants, the exit hooks and
// the history check read, with processes by ID (a pointer is no state).
// An explorer caches visited states by it, so a ledger left out here would
// let it merge two states whose futures differ: when a field is added to
// leaseWorld or leaseSpace, add it here.
func (lw *leaseWorld) stateKey() uint64 {
	var k keyHash
	k.ints(lw.workers, lw.respawns, lw.sessions, boolInt(lw.failure != nil))
	lw.cli.key(&k)
	if lw.failure != nil {
		k.str(lw.failure.Error())
	}
	for _, s := range lw.spaces {
		k.ints(s.index, int(s.lastFencedEpoch), int(s.epochMaxReturned), len(s.epochs), len(s.corruptions), len(s.carried),
			boolInt(s.ownerCorrupted), s.hostileSerial, int(s.hostileClearedAt), len(s.hostileBytes), boolInt(s.tracked),
			len(s.hostileInPlace))
		for _, path := range s.hostileInPlace {
			k.str(path)
		}
		k.ints(boolInt(s.epochTear != nil), len(s.mootLinks))
		for _, link := range s.mootLinks {
			k.str(link.kind + "|" + link.path + "|" + link.moved + "|" + link.before)
		}
		k.linkLedger(s)
		var epochs uint64
		for e, generation := range s.epochs {
			var entry keyHash
			entry.ints(int(e))
			entry.str(generation)
			epochs += entryMix(entry.h)
		}
		k.ints(int(epochs))
		if in := lw.inside[s]; in != nil {
			k.ints(procID(in.proc), int(in.epoch))
			k.str(in.generation)
		}
	}
	k.procMap(lw.acquirer)
	k.procMap(lw.sessionProc)
	var deaths uint64
	for p, at := range lw.deathAt {
		var entry keyHash
		entry.ints(p.ID(), int(at))
		deaths += entryMix(entry.h)
	}
	k.ints(len(lw.deathAt), int(deaths))
	k.ints(len(lw.checks), len(lw.allReclaims), len(lw.moves), len(lw.reclaimsPending))
	for _, c := range lw.checks {
		k.ints(c.space.index)
		k.str(c.path + "|" + c.generation + "|" + c.proc)
	}
	for _, m := range lw.moves {
		k.ints(m.space.index, procID(m.proc))
		k.str(m.path)
	}
	for _, r := range lw.reclaimsPending {
		k.ints(r.event, r.space.index, procID(r.proc))
		k.str(r.path)
	}
	if l := lw.liveness; l != nil {
		k.ints(1, l.startStep, len(l.pending), l.hops, procID(l.probe), boolInt(l.done))
	}
	k.ints(len(lw.paused.held), len(lw.paused.forced), len(lw.paused.operators))
	return k.h
}

// linkLedger folds the co-tenant's ledgers of a space: the corruptions
// (kind, path, repair step, whether a link), the filed links with their
// repair steps, and the counters of planted and unsafe links. Two states
// that differ only in when a repair is due have different futures.
func (k *keyHash) linkLedger(s *leaseSpace) {
	for _, c := range s.corruptions {
		k.ints(c.repairAt, boolInt(c.link != nil), len(c.written))
		k.str(c.kind + "|" + c.path)
	}
	k.ints(len(s.symlinks), len(s.linkIDs), boolInt(s.epochLinked), s.unsafeLinks)
	for _, link := range s.symlinks {
		k.ints(link.repairAt)
		k.str(link.kind + "|" + link.path + "|" + link.moved + "|" + link.before)
	}
}

func procID(p *sim.Proc) int {
	if p == nil {
		return -1
	}
	return p.ID()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// keyHash folds values into a state key without fmt (it runs every step).
type keyHash struct{ h uint64 }

func (k *keyHash) ints(values ...int) {
	for _, v := range values {
		k.h = (k.h ^ uint64(v)) * 0x100000001b3
		k.h ^= k.h >> 29
	}
}

func (k *keyHash) str(s string) {
	k.ints(len(s))
	for i := 0; i < len(s); i++ {
		k.h = (k.h ^ uint64(s[i])) * 0x100000001b3
	}
}

// procMap folds a generation-to-process map: a sum of its entries'
// hashes, which no map order moves (sorting the keys at every step cost
// a sixth of a deep exploration).
func (k *keyHash) procMap(m map[string]*sim.Proc) {
	var sum uint64
	for key, p := range m {
		var entry keyHash
		entry.str(key)
		entry.ints(procID(p))
		sum += entryMix(entry.h)
	}
	k.ints(len(m), int(sum))
}

// entryMix finishes an entry's hash before it is summed with the others
// (splitmix64's finalizer: a plain sum of FNV states would let two
// different sets of entries collide far too easily).
func entryMix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
