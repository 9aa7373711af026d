package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/osenv"
	"github.com/leasekit/leasekit/leasecli"
)

// treePollsMax bounds the polls of a command tree that outlived its
// wrapper (at waitBackoffMax apart: about six days).
const treePollsMax = 1 << 20

// treeWatch judges, beside the engine, the command trees of killed
// leasereal runs (leasecli.HolderTreeRuns): a lease whose recorded run was
// killed while its command's descendants still run in its process group
// stays held until they exit.
type treeWatch struct {
	env leasecli.Env
}

func newTreeWatch() (*treeWatch, error) {
	inspector := osenv.NewInspector()
	self, err := inspector.Current()
	if err != nil {
		return nil, err
	}
	return &treeWatch{env: leasecli.Env{Self: self, Inspector: inspector, Groups: commandGroups(), FS: osenv.NewFS()}}, nil
}

// waitHolderTree waits, within the run's wait, while the lease's recorded
// owner is gone but its command tree runs, or while the tree of an owner
// the engine reclaimed into quarantine/ runs (a run that reclaimed it was
// killed before it waited for that tree); at the end of the wait that is
// a holder (the conflict code, as flock).
func (t *treeWatch) waitHolderTree(manager *lease.Manager, f runFlags, signals <-chan os.Signal, stderr io.Writer) error {
	deadline := time.Now().Add(f.wait)
	backoff := waitBackoffMin
	for range treePollsMax {
		projection, err := manager.Inspect(context.Background())
		if err != nil {
			return nil // the acquire reports it
		}
		_, verdict, err := leasecli.HeldByTree(projection, manager.Namespace(), t.env)
		if err != nil {
			return err
		}
		if !verdict.Runs {
			return nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			if f.verbose {
				fmt.Fprintf(stderr, "leasereal: %s is held: %s\n", manager.Namespace(), verdict.Why)
			}
			return &codeError{code: f.conflictCode}
		}
		if err := pause(min(backoff, left), signals); err != nil {
			return err
		}
		backoff = min(2*backoff, waitBackoffMax)
	}
	return fmt.Errorf("leasereal: the command tree holding %s outlived %d polls", manager.Namespace(), treePollsMax)
}

// waitReclaimedTree holds the acquired lease, without starting the
// command, while the tree of an owner the acquire reclaimed still runs
// (that owner was killed after waitHolderTree looked), or the tree of an
// owner in quarantine/ that another run reclaimed while this acquire
// waited (leasecli.AcquiredTreeRuns). The wait ignores the
// run's -w (giving up would free the lease while the tree runs); it is
// bounded by treePollsMax.
func (t *treeWatch) waitReclaimedTree(namespace string, result lease.AcquireResult, signals <-chan os.Signal, stderr io.Writer) error {
	said := false
	for range treePollsMax {
		verdict, err := leasecli.AcquiredTreeRuns(result, namespace, t.env)
		if err != nil || !verdict.Runs {
			return err
		}
		if !said {
			fmt.Fprintf(stderr, "leasereal: %s; holding the lease until it exits\n", verdict.Why)
			said = true
		}
		if err := pause(waitBackoffMax, signals); err != nil {
			return err
		}
	}
	return fmt.Errorf("leasereal: a reclaimed command tree outlived %d polls", treePollsMax)
}

// pause sleeps d, or ends the run early on a caught signal (128+N).
func pause(d time.Duration, signals <-chan os.Signal) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case sig := <-signals:
		return interruptedError(sig)
	}
}

// releaseAfter releases a lease the run will not use, reporting a failure.
func releaseAfter(manager *lease.Manager, owner lease.Owner, cause error, stderr io.Writer) {
	if _, err := manager.Release(context.Background(), owner.Generation); err != nil {
		fmt.Fprintf(stderr, "leasereal: releasing %s after %v: %v\n", manager.Namespace(), cause, err)
	}
}
