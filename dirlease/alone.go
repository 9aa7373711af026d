package dirlease

import (
	"strconv"
	"strings"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/internal/statecas"
	"github.com/leasekit/leasekit/internal/statefile"
)

// One lease per directory. Create writes its claim first and then looks at
// every other claim: one that names the same directory (by identity, or by
// path) makes it withdraw its own claim and refuse as busy. Two Creates
// racing on one directory may both withdraw (both busy, nothing held); they
// cannot both win, since each one's look follows its own write. A claim
// that wins also checks that the directory still has the identity it
// recorded (a recovery that removed it for a dead claim does so before
// releasing that claim).

// namesSame reports whether two claims name one directory.
func namesSame(a, b Claim) bool {
	return a.DirectoryIdentity == b.DirectoryIdentity || a.Path == b.Path
}

// checkRoom is Create's look before its write: a claim directory that
// already holds ClaimsMax entries is full (ErrFull) and nothing is written.
// Without it every killed creator's claim stays until a recovery, the
// directory grows without end, and once it is past the bound recovery
// reads in one pass the state home wedges. Creates racing for the last
// room may each pass it (each looks before the others write): the
// directory then holds a few more than ClaimsMax, which recovery still
// reads (up to inspectEntriesMax).
func checkRoom(config Config, uid uint32, root string) error {
	snapshot, err := statecas.Snapshot(config.Env(uid), uid, root, statecas.SnapshotOptions{EntriesMax: inspectEntriesMax})
	if statecas.KindOf(err) == statecas.ErrBound {
		return overListing(config, root, err)
	}
	if err != nil {
		return err
	}
	if held := len(snapshot.Entries); held >= ClaimsMax {
		return fail(ErrFull, root, "directory lease state home "+config.StateHome+" is full: it holds "+strconv.Itoa(held)+
			" claims, at its bound of "+strconv.Itoa(ClaimsMax)+"; no lease is created until recovery removes the "+
			"claims of owners that are gone; run: leasereal dirlease recover --state-home "+config.StateHome+
			" (leasereal dirlease inspect --state-home "+config.StateHome+" shows what holds them)", nil)
	}
	return nil
}

// overListing is the refusal of a claim directory over inspectEntriesMax
// entries: more than Create's bound lets in, so they were put there by
// other hands, and no call of this package reads them all.
func overListing(config Config, root string, err error) error {
	quarantine := fspath.Join(append([]string{config.StateHome}, QuarantineDir...)...)
	return fail(ErrBound, root, "directory lease collection is over its listing bound ("+strconv.Itoa(inspectEntriesMax)+
		" entries), more than Create ever writes ("+strconv.Itoa(ClaimsMax)+"): move entries out by hand "+
		"(mkdir -p -m 700 "+quarantine+" && mv "+root+"/NAME "+quarantine+"/), then run: leasereal dirlease recover --state-home "+
		config.StateHome, err)
}

// checkAlone is Create's look after its write: ErrBusy when another claim
// names the same directory, ErrBound when the collection is too large to
// look through (Inspect's listing bound), ErrChanged when the directory is
// no longer the recorded one. Entries without a claim's name are passed
// over here (Recover and Inspect judge them; one that names a directory is
// another claim's copy, whose own file names it too); a claim that cannot
// be read or parsed fails Create closed, since it may name this directory.
func checkAlone(config Config, uid uint32, root string, mine Claim) error {
	snapshot, err := statecas.Snapshot(config.Env(uid), uid, root, statecas.SnapshotOptions{EntriesMax: inspectEntriesMax})
	if statecas.KindOf(err) == statecas.ErrBound {
		return overListing(config, root, err)
	}
	if err != nil {
		return err
	}
	// Each claim is read into one buffer: Parse keeps nothing of the bytes.
	var buffer statecas.ReadBuffer
	for _, entry := range snapshot.Entries {
		id, isJSON := strings.CutSuffix(entry.Name, ".json")
		if !entry.IsRegular() || !isJSON || !statefile.IsUUIDv4(id) || id == mine.ID {
			continue
		}
		full := fspath.Join(root, entry.Name)
		content, present, err := buffer.ReadIfPresent(config.Env(uid), full, ClaimBytesMax)
		if statecas.KindOf(err) == statecas.ErrBound {
			return fail(ErrCorrupt, full, "directory lease exceeds its size bound; inspect it (leasereal dirlease inspect)", err)
		}
		if err != nil {
			return err // a claim that cannot be read may name this directory
		}
		if !present {
			continue // released since the listing
		}
		other, err := Parse(content, entry.Name, full)
		if err != nil {
			return err // a claim that cannot be read may name this directory
		}
		if namesSame(mine, other) {
			return fail(ErrBusy, mine.Path, "directory lease target is busy: claim "+other.ID+" already names it; "+
				"wait for its holder to release it, or, once its holder is gone, run recovery (leasereal dirlease recover)", nil)
		}
	}
	identity, err := physicalIdentity(config, uid, mine.Path, true)
	if err != nil {
		return err
	}
	if identity != mine.DirectoryIdentity {
		return fail(ErrChanged, mine.Path, "directory lease target changed during creation", nil)
	}
	return nil
}

// withdraw removes a claim Create just wrote and then refused; refusal is
// the error returned. A claim that cannot be withdrawn is reported with it.
func withdraw(config Config, uid uint32, held *Lease, refusal error) error {
	removed, err := statecas.RemoveIfUnchanged(config.Env(uid), held.claimPath, held.sha)
	if err == nil && removed {
		return refusal
	}
	return fail(ErrUnsafe, held.claimPath, "directory lease was refused and its claim could not be withdrawn; recovery takes it", refusal)
}

// heldElsewhere is the disposition of another claim of the pass (not in
// file) that names the directory of c and is not itself recoverable, or ""
// when none does: its holder may be working in the directory, so it is not
// c's to remove. Active wins over indeterminate.
func heldElsewhere(file string, c Claim, all []parsedClaim, judge func(Claim) Disposition) Disposition {
	var held Disposition
	for _, other := range all {
		if other.file == file || !namesSame(c, other.claim) {
			continue
		}
		switch judge(other.claim) {
		case DispositionActive:
			return DispositionActive
		case DispositionIndeterminate:
			held = DispositionIndeterminate
		}
	}
	return held
}

// judgeInPass is the recovery judgement of one claim in a pass: its own
// (dispose), unless it is recoverable and another claim of the pass holds
// its directory, which then counts as that claim's disposition.
func judgeInPass(file string, all []parsedClaim, judge func(Claim) Disposition) func(Claim) Disposition {
	return func(c Claim) Disposition {
		own := judge(c)
		if own != DispositionRecoverable {
			return own
		}
		if held := heldElsewhere(file, c, all, judge); held != "" {
			return held
		}
		return own
	}
}
