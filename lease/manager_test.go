package lease_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leasekit/leasekit/internal/require"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/leasetest"
)

func TestNewManagerValidatesConfig(t *testing.T) {
	w := newWorld(t)
	good := lease.Config{Namespace: w.ns, RootID: rootID, FS: w.fs, Clock: w.clock, Inspector: w.table, IDs: w.ids}
	cases := []struct {
		name   string
		mutate func(*lease.Config)
		want   string
	}{
		{"relative namespace", func(c *lease.Config) { c.Namespace = "ns" }, "absolute clean"},
		{"unclean namespace", func(c *lease.Config) { c.Namespace = w.ns + "/../ns" }, "absolute clean"},
		{"root namespace", func(c *lease.Config) { c.Namespace = "/" }, "root directory"},
		{"empty rootId", func(c *lease.Config) { c.RootID = "" }, "rootId"},
		{"missing FS", func(c *lease.Config) { c.FS = nil }, "required"},
		{"negative wait", func(c *lease.Config) { c.GuardWait = -time.Second }, "negative"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := good
			tc.mutate(&cfg)
			_, err := lease.NewManager(cfg)
			var configErr *lease.ConfigError
			require.ErrorAs(t, err, &configErr)
			require.Contains(t, err.Error(), tc.want)
		})
	}
	_, err := lease.NewManager(good)
	require.NoError(t, err)
	_, statErr := os.Lstat(w.ns)
	require.ErrorIs(t, statErr, os.ErrNotExist, "NewManager must not touch the disk")
}

func TestAcquireRejectsBadRequests(t *testing.T) {
	w := newWorld(t)
	m := w.manager(leasetest.Identity(1))
	for _, req := range []lease.AcquireRequest{{SessionID: "s", SessionFile: "f"}, {SessionFile: "relative/f"}} {
		_, err := m.Acquire(context.Background(), req)
		var requestErr *lease.RequestError
		require.ErrorAs(t, err, &requestErr)
	}
	_, err := m.Release(context.Background(), "")
	require.Error(t, err)
}

// The session fields are optional: an empty SessionID is recorded as the
// generation, an empty SessionFile as the caller's executable, so the
// owner record keeps the original implementation's required non-empty piSessionId and
// absolute piSessionFile.
func TestAcquireFillsInOptionalSessionFields(t *testing.T) {
	w := newWorld(t)
	p := leasetest.Identity(1)
	result, err := w.manager(p).Acquire(context.Background(), lease.AcquireRequest{})
	require.NoError(t, err)
	require.Equal(t, lease.Acquired, result.Kind)
	require.Equal(t, result.Owner.Generation, result.Owner.SessionID)
	require.Equal(t, p.Executable, result.Owner.SessionFile)
	owner := w.read("receiver.lock/owner.json")
	require.Contains(t, owner, `"piSessionId":"`+result.Owner.Generation+`"`)
	require.Contains(t, owner, `"piSessionFile":"`+p.Executable+`"`)
}

func TestAcquireOnEmptyNamespacePublishesOwner(t *testing.T) {
	w := newWorld(t)
	p := leasetest.Identity(1)
	result := w.acquire(w.manager(p))
	require.Equal(t, lease.Acquired, result.Kind)
	require.Empty(t, result.Reclaimed)
	owner := result.Owner
	require.Equal(t, lease.OwnerSchema, owner.Schema)
	require.Equal(t, uint64(1), owner.Epoch)
	require.Equal(t, p, owner.Identity())
	require.Equal(t, request.SessionID, owner.SessionID)
	require.Equal(t, rootID, owner.RootID)
	require.Equal(t, "2026-01-02T03:04:05.000Z", owner.CreatedAt)

	require.Equal(t, []string{"lifecycle-reclaims", "quarantine", "receiver.epoch.issued.json", "receiver.epoch.json", "receiver.lock"}, w.names())
	require.Empty(t, w.names("quarantine"))
	require.Empty(t, w.names("lifecycle-reclaims"))
	require.Equal(t, []string{"owner.json"}, w.names("receiver.lock"))
	require.Equal(t, `{"epoch":1,"schema":1}`+"\n", w.read("receiver.epoch.json"))
	golden := `{"bootIdentity":"boot-1","createdAt":"2026-01-02T03:04:05.000Z","epoch":1,` +
		`"executable":"/usr/local/bin/leasekit","executableDevice":"2049","executableInode":"131072",` +
		`"generation":"` + owner.Generation + `","hostname":"host-a",` +
		`"piSessionFile":"/home/u/.pi/session-1.jsonl","piSessionId":"session-1","pid":1,"pidNamespace":"4026531836",` +
		`"processStartIdentity":"1001","rootId":"root-1","schema":2,"uid":` + strconv.Itoa(leasetest.UID) + "}\n"
	require.Equal(t, golden, w.read("receiver.lock/owner.json"), "canonical schema-2 bytes")

	projection, err := w.manager(p).Inspect(context.Background())
	require.NoError(t, err)
	require.Equal(t, lease.Projection{Kind: lease.Owned, Owner: owner}, projection)
}

func TestAcquireByLiveOwnerOrAnotherLiveProcessIsHeld(t *testing.T) {
	w := newWorld(t)
	p, q := leasetest.Identity(1), leasetest.Identity(2)
	first := w.acquire(w.manager(p))
	before := w.tree()
	for _, id := range []lease.ProcessIdentity{p, q} {
		again := w.acquire(w.manager(id))
		require.Equal(t, lease.Held, again.Kind)
		require.Equal(t, first.Owner, again.Owner)
	}
	require.Equal(t, before, w.tree(), "Held must change nothing on disk")
}

// TestOwnerVerdicts runs every identity rule against a recorded owner P
// (PID 1) from the point of view of process Q.
func TestOwnerVerdicts(t *testing.T) {
	p := leasetest.Identity(1)
	reused := p
	reused.StartTime = "99999"
	upgraded := p
	upgraded.ExecutableIno++
	deletedPath := p
	deletedPath.Executable = p.Executable + " (deleted)"
	q := leasetest.Identity(2)
	qOtherBoot := q
	qOtherBoot.BootID = "boot-2"
	qOtherNamespace := q
	qOtherNamespace.PIDNamespace = "4026532000"
	qRemote := q
	qRemote.Hostname = "host-b"
	cases := []struct {
		name        string
		observer    lease.ProcessIdentity
		script      func(*leasetest.Inspector)
		kind        lease.AcquireKind
		staleReason string
		refusal     lease.RefusalReason
		human       lease.HumanState
	}{
		{name: "live", observer: q, kind: lease.Held},
		{name: "pid absent", observer: q, script: func(in *leasetest.Inspector) { in.Kill(1) },
			kind: lease.Acquired, staleReason: lease.StalePIDAbsent},
		{name: "pid reused with another start time", observer: q,
			script: func(in *leasetest.Inspector) { in.SetLive(reused) },
			kind:   lease.Acquired, staleReason: lease.StaleStartChanged},
		{name: "another boot id", observer: qOtherBoot, kind: lease.Acquired, staleReason: lease.StaleBootChanged},
		{name: "zombie with one thread", observer: q,
			script: func(in *leasetest.Inspector) { in.Set(1, leasetest.Zombie(p, 1)) },
			kind:   lease.Acquired, staleReason: lease.StaleZombie},
		{name: "zombie leader with live threads", observer: q,
			script: func(in *leasetest.Inspector) { in.Set(1, leasetest.Zombie(p, 4)) }, kind: lease.Held},
		{name: "executable replaced", observer: q,
			script: func(in *leasetest.Inspector) { in.SetLive(upgraded) },
			kind:   lease.Acquired, staleReason: lease.StaleExecutableChanged},
		{name: "executable path deleted but same inode", observer: q,
			script: func(in *leasetest.Inspector) { in.SetLive(deletedPath) }, kind: lease.Held},
		{name: "foreign pid namespace", observer: qOtherNamespace, kind: lease.Refused,
			refusal: lease.RefusalUnverifiableOwner, human: lease.HumanForeignNamespace},
		{name: "remote host", observer: qRemote, kind: lease.Refused,
			refusal: lease.RefusalRemoteOwner, human: lease.HumanRemoteRecord},
		{name: "unknown inspection", observer: q,
			script: func(in *leasetest.Inspector) { in.Set(1, leasetest.Unknown("EACCES reading /proc/1/stat")) },
			kind:   lease.Refused, refusal: lease.RefusalUnverifiableOwner, human: lease.HumanNone},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			first := w.acquire(w.manager(p))
			original := w.read("receiver.lock/owner.json")
			observer := w.manager(tc.observer)
			if tc.script != nil {
				tc.script(w.table)
			}
			before := w.tree()
			result := w.acquire(observer)
			require.Equal(t, tc.kind, result.Kind, "result %+v", result)
			switch tc.kind {
			case lease.Held:
				require.Equal(t, first.Owner, result.Owner)
				require.Equal(t, before, w.tree())
			case lease.Refused:
				require.Equal(t, tc.refusal, result.Refusal.Reason)
				require.Equal(t, tc.human, result.Refusal.Human)
				require.Contains(t, result.Refusal.Diagnostic, "PID")
				require.Equal(t, before, w.tree(), "a refusal changes nothing")
			case lease.Acquired:
				require.Len(t, result.Reclaimed, 1)
				reclaim := result.Reclaimed[0]
				require.Equal(t, tc.staleReason, reclaim.Reason)
				require.Equal(t, first.Owner, reclaim.Owner)
				require.Equal(t, filepath.Join(w.ns, "quarantine"), filepath.Dir(reclaim.QuarantinePath))
				quarantined, err := os.ReadFile(filepath.Join(reclaim.QuarantinePath, "owner.json"))
				require.NoError(t, err)
				require.Equal(t, original, string(quarantined), "the reclaimed record survives in quarantine")
				require.Equal(t, tc.observer.PID, result.Owner.PID)
				require.Equal(t, uint64(2), result.Owner.Epoch)
			}
		})
	}
}

func TestCorruptStatesAreRefusedAndLeftAlone(t *testing.T) {
	p := leasetest.Identity(1)
	valid := ownerJSON(p, "00000000-0000-4000-8000-00000000abcd", 1)
	cases := []struct {
		name  string
		setup func(w *world)
		human lease.HumanState
		want  string
	}{
		{"owner.json truncated", func(w *world) { w.write("receiver.lock/owner.json", valid[:len(valid)/2]) },
			lease.HumanCorruptOwner, "not valid JSON"},
		{"owner.json empty", func(w *world) { w.write("receiver.lock/owner.json", "") },
			lease.HumanCorruptOwner, "not valid JSON"},
		{"unknown field", func(w *world) {
			w.write("receiver.lock/owner.json", strings.Replace(valid, `"uid":`, `"color":"red","uid":`, 1))
		}, lease.HumanCorruptOwner, `unknown fields: color`},
		{"unsupported schema", func(w *world) {
			w.write("receiver.lock/owner.json", strings.Replace(valid, `"schema":2`, `"schema":3`, 1))
		}, lease.HumanCorruptOwner, "unsupported schema 3"},
		{"schema 1 with schema 2 fields", func(w *world) {
			w.write("receiver.lock/owner.json", strings.Replace(valid, `"schema":2`, `"schema":1`, 1))
		}, lease.HumanCorruptOwner, "unknown fields"},
		{"wrong type", func(w *world) {
			w.write("receiver.lock/owner.json", strings.Replace(valid, `"pid":1`, `"pid":"1"`, 1))
		}, lease.HumanCorruptOwner, "pid must be a number"},
		{"duplicate field", func(w *world) {
			w.write("receiver.lock/owner.json", strings.Replace(valid, `"pid":1`, `"pid":1,"pid":2`, 1))
		}, lease.HumanCorruptOwner, `duplicate field "pid"`},
		{"trailing data", func(w *world) { w.write("receiver.lock/owner.json", valid+"{}") },
			lease.HumanCorruptOwner, "trailing data"},
		{"receiver.lock without owner.json", func(w *world) {
			require.NoError(t, os.MkdirAll(w.path("receiver.lock"), 0o700))
		}, lease.HumanEmptyReceiverLock, "without a complete owner.json"},
		{"symlink in place of receiver.lock", func(w *world) {
			w.write("elsewhere/owner.json", valid)
			require.NoError(t, os.Symlink(w.path("elsewhere"), w.path("receiver.lock")))
		}, lease.HumanReceiverLockNotDirectory, "not a directory"},
		{"plain file in place of receiver.lock", func(w *world) { w.write("receiver.lock", valid) },
			lease.HumanReceiverLockNotDirectory, "not a directory"},
		{"owner.json is a symlink", func(w *world) {
			w.write("elsewhere.json", valid)
			require.NoError(t, os.MkdirAll(w.path("receiver.lock"), 0o700))
			require.NoError(t, os.Symlink(w.path("elsewhere.json"), w.path("receiver.lock", "owner.json")))
		}, lease.HumanCorruptOwner, "not a regular file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			for _, dir := range []string{"quarantine", "lifecycle-reclaims"} {
				require.NoError(t, os.MkdirAll(w.path(dir), 0o700))
			}
			tc.setup(w)
			before := w.tree()
			m := w.manager(leasetest.Identity(2))
			ctx := context.Background()

			result := w.acquire(m)
			require.Equal(t, lease.Refused, result.Kind)
			require.Equal(t, lease.RefusalCorruptOwner, result.Refusal.Reason)
			require.Equal(t, tc.human, result.Refusal.Human)
			require.Contains(t, result.Refusal.Diagnostic, tc.want)

			projection, err := m.Inspect(ctx)
			require.NoError(t, err)
			require.Equal(t, lease.Corrupt, projection.Kind)
			require.Equal(t, tc.human, projection.Human)

			released, err := m.Release(ctx, "00000000-0000-4000-8000-00000000abcd")
			require.NoError(t, err)
			require.Equal(t, lease.ReleaseRefused, released.Kind)
			require.Equal(t, lease.RefusalCorruptOwner, released.Refusal.Reason)

			err = m.WithCurrentLease(ctx, "00000000-0000-4000-8000-00000000abcd", func(context.Context, lease.Owner) error {
				t.Fatal("fn must not run on a corrupt lease")
				return nil
			})
			var fence *lease.FenceError
			require.ErrorAs(t, err, &fence)
			require.Equal(t, before, w.tree(), "corrupt state must be left exactly as found")
		})
	}
}

func TestSeedSchemaOneOwnerIsHonoured(t *testing.T) {
	p := leasetest.Identity(1)
	legacy := `{"bootIdentity":null,"createdAt":"2025-06-01T10:00:00.000Z","executable":"` + p.Executable +
		`","generation":"legacy-gen","hostname":"` + p.Hostname + `","pid":1,"piSessionFile":"/s/f.jsonl",` +
		`"piSessionId":"s","processStartIdentity":"` + p.StartTime + `","rootId":"` + rootID + `","schema":1}` + "\n"
	t.Run("live by path is held and usable by its process", func(t *testing.T) {
		w := newWorld(t)
		w.write("receiver.lock/owner.json", legacy)
		result := w.acquire(w.manager(leasetest.Identity(2)))
		require.Equal(t, lease.Held, result.Kind)
		require.Equal(t, 1, result.Owner.Schema)
		require.Equal(t, uint64(0), result.Owner.Epoch)
		require.Equal(t, -1, result.Owner.UID)
		ran := false
		err := w.manager(p).WithCurrentLease(context.Background(), "legacy-gen", func(context.Context, lease.Owner) error {
			ran = true
			return nil
		})
		require.NoError(t, err)
		require.True(t, ran)
	})
	t.Run("executable path changed is stale", func(t *testing.T) {
		w := newWorld(t)
		w.write("receiver.lock/owner.json", legacy)
		q := w.manager(leasetest.Identity(2))
		moved := p
		moved.Executable = "/usr/local/bin/other"
		w.table.SetLive(moved)
		result := w.acquire(q)
		require.Equal(t, lease.Acquired, result.Kind)
		require.Len(t, result.Reclaimed, 1)
		require.Equal(t, lease.StaleExecutableChanged, result.Reclaimed[0].Reason)
		require.Equal(t, uint64(1), result.Owner.Epoch)
	})
}

func TestReleaseOutcomes(t *testing.T) {
	ctx := context.Background()
	p, q := leasetest.Identity(1), leasetest.Identity(2)
	t.Run("owner releases and leaves no leftovers", func(t *testing.T) {
		w := newWorld(t)
		m := w.manager(p)
		owner := w.acquire(m).Owner
		result, err := m.Release(ctx, owner.Generation)
		require.NoError(t, err)
		require.Equal(t, lease.ReleaseResult{Kind: lease.Released}, result)
		require.Equal(t, []string{"lifecycle-reclaims", "quarantine", "receiver.epoch.issued.json", "receiver.epoch.json"}, w.names())
		again, err := m.Release(ctx, owner.Generation)
		require.NoError(t, err)
		require.Equal(t, lease.NotOwner, again.Kind)
		require.Nil(t, again.Owner)
		require.Equal(t, "no lease is held", again.Why)
	})
	t.Run("wrong generation is not-owner with the owner and why", func(t *testing.T) {
		w := newWorld(t)
		owner := w.acquire(w.manager(p)).Owner
		before := w.tree()
		result, err := w.manager(q).Release(ctx, "00000000-0000-4000-8000-0000000000ff")
		require.NoError(t, err)
		require.Equal(t, lease.NotOwner, result.Kind)
		require.Equal(t, owner, *result.Owner)
		require.Contains(t, result.Why, "is not current")
		require.Equal(t, before, w.tree())
	})
	t.Run("another root is not-owner", func(t *testing.T) {
		w := newWorld(t)
		owner := w.acquire(w.manager(p)).Owner
		other, err := lease.NewManager(lease.Config{Namespace: w.ns, RootID: "root-2", FS: w.fs, Clock: w.clock,
			Inspector: w.table.As(p), IDs: w.ids})
		require.NoError(t, err)
		result, err := other.Release(ctx, owner.Generation)
		require.NoError(t, err)
		require.Equal(t, lease.NotOwner, result.Kind)
		require.Contains(t, result.Why, `belongs to root "root-1"`)
	})
	t.Run("the generation is a capability: another process may release", func(t *testing.T) {
		w := newWorld(t)
		owner := w.acquire(w.manager(p)).Owner
		result, err := w.manager(q).Release(ctx, owner.Generation)
		require.NoError(t, err)
		require.Equal(t, lease.Released, result.Kind)
	})
	t.Run("guard busy is refused with the reason", func(t *testing.T) {
		w := newWorld(t)
		owner := w.acquire(w.manager(p)).Owner
		holder := leasetest.Identity(7)
		w.table.SetLive(holder)
		w.write("receiver.lifecycle.guard.json", guardJSON(holder, "held-guard"))
		result, err := w.managerWith(q, 50*time.Millisecond).Release(ctx, owner.Generation)
		require.NoError(t, err)
		require.Equal(t, lease.ReleaseRefused, result.Kind)
		require.Equal(t, lease.RefusalLifecycleBusy, result.Refusal.Reason)
		require.Contains(t, result.Refusal.Diagnostic, "live PID 7")
	})
}

func TestWithCurrentLease(t *testing.T) {
	ctx := context.Background()
	p, q := leasetest.Identity(1), leasetest.Identity(2)
	t.Run("runs fn for the owning process and returns its error as is", func(t *testing.T) {
		w := newWorld(t)
		m := w.manager(p)
		owner := w.acquire(m).Owner
		sentinel := errors.New("fn failed")
		var seen lease.Owner
		err := m.WithCurrentLease(ctx, owner.Generation, func(_ context.Context, o lease.Owner) error {
			seen = o
			_, statErr := os.Stat(w.path("receiver.lifecycle.guard.json"))
			require.NoError(t, statErr, "fn runs under the guard")
			return sentinel
		})
		require.Same(t, sentinel, err)
		require.Equal(t, owner, seen)
		_, statErr := os.Stat(w.path("receiver.lifecycle.guard.json"))
		require.ErrorIs(t, statErr, os.ErrNotExist, "the guard is released after fn")
	})
	fenced := func(t *testing.T, m *lease.Manager, generation, why string) {
		t.Helper()
		err := m.WithCurrentLease(ctx, generation, func(context.Context, lease.Owner) error {
			t.Fatal("fn must not run when fenced")
			return nil
		})
		var fence *lease.FenceError
		require.ErrorAs(t, err, &fence)
		require.Contains(t, fence.Why, why)
	}
	t.Run("another process presenting the generation is fenced", func(t *testing.T) {
		w := newWorld(t)
		owner := w.acquire(w.manager(p)).Owner
		fenced(t, w.manager(q), owner.Generation, "not by this process")
	})
	t.Run("fenced after a reclaim", func(t *testing.T) {
		w := newWorld(t)
		m := w.manager(p)
		owner := w.acquire(m).Owner
		// Q sees P's PID reused (P is wrongly judged dead, or paused past a
		// reboot): Q reclaims, and P's old generation must be fenced.
		reused := p
		reused.StartTime = "424242"
		qm := w.manager(q)
		w.table.SetLive(reused)
		result := w.acquire(qm)
		require.Equal(t, lease.Acquired, result.Kind)
		require.Greater(t, result.Owner.Epoch, owner.Epoch)
		fenced(t, m, owner.Generation, "now has generation "+result.Owner.Generation)
		fenced(t, m, owner.Generation, "")
	})
	t.Run("after release", func(t *testing.T) {
		w := newWorld(t)
		m := w.manager(p)
		owner := w.acquire(m).Owner
		_, err := m.Release(ctx, owner.Generation)
		require.NoError(t, err)
		fenced(t, m, owner.Generation, "no lease is held")
	})
	t.Run("busy guard is a BusyError, not a fence", func(t *testing.T) {
		w := newWorld(t)
		m := w.managerWith(p, 100*time.Millisecond)
		owner := w.acquire(m).Owner
		holder := leasetest.Identity(7)
		w.table.SetLive(holder)
		w.write("receiver.lifecycle.guard.json", guardJSON(holder, "held-guard"))
		start := w.clock.Monotonic()
		err := m.WithCurrentLease(ctx, owner.Generation, func(context.Context, lease.Owner) error { return nil })
		var busyErr *lease.BusyError
		require.ErrorAs(t, err, &busyErr)
		var fence *lease.FenceError
		require.False(t, errors.As(err, &fence))
		require.Equal(t, 100*time.Millisecond, w.clock.Monotonic()-start, "the wait ends exactly at the deadline")
		sleeps, slept := w.clock.Sleeps()
		require.Equal(t, 20, sleeps, "5 ms polls through Clock.Sleep")
		require.Equal(t, 100*time.Millisecond, slept)
	})
	t.Run("corrupt guard is an UnverifiableError naming the human state", func(t *testing.T) {
		w := newWorld(t)
		m := w.manager(p)
		owner := w.acquire(m).Owner
		w.write("receiver.lifecycle.guard.json", "{")
		err := m.WithCurrentLease(ctx, owner.Generation, func(context.Context, lease.Owner) error { return nil })
		var unverifiable *lease.UnverifiableError
		require.ErrorAs(t, err, &unverifiable)
		require.Equal(t, lease.HumanCorruptGuard, unverifiable.Refusal.Human)
	})
}

func TestGuardRefusalsAndReclaim(t *testing.T) {
	p := leasetest.Identity(1)
	holder := leasetest.Identity(7)
	remoteHolder := holder
	remoteHolder.Hostname = "host-b"
	foreignHolder := holder
	foreignHolder.PIDNamespace = "4026532000"
	cases := []struct {
		name   string
		setup  func(w *world)
		kind   lease.AcquireKind
		reason lease.RefusalReason
		human  lease.HumanState
	}{
		{"live guard is busy", func(w *world) {
			w.table.SetLive(holder)
			w.write("receiver.lifecycle.guard.json", guardJSON(holder, "g"))
		}, lease.Refused, lease.RefusalLifecycleBusy, lease.HumanNone},
		{"corrupt guard", func(w *world) { w.write("receiver.lifecycle.guard.json", `{"schema":2}`) },
			lease.Refused, lease.RefusalLifecycleUnverifiable, lease.HumanCorruptGuard},
		{"remote guard", func(w *world) { w.write("receiver.lifecycle.guard.json", guardJSON(remoteHolder, "g")) },
			lease.Refused, lease.RefusalLifecycleUnverifiable, lease.HumanRemoteRecord},
		{"guard in a foreign pid namespace", func(w *world) {
			w.write("receiver.lifecycle.guard.json", guardJSON(foreignHolder, "g"))
		}, lease.Refused, lease.RefusalLifecycleUnverifiable, lease.HumanForeignNamespace},
		{"uninspectable guard", func(w *world) {
			w.table.Set(7, leasetest.Unknown("EACCES"))
			w.write("receiver.lifecycle.guard.json", guardJSON(holder, "g"))
		}, lease.Refused, lease.RefusalLifecycleUnverifiable, lease.HumanNone},
		{"corrupt intent", func(w *world) { w.write("lifecycle-reclaims/reclaim.x.json", "nope") },
			lease.Refused, lease.RefusalLifecycleUnverifiable, lease.HumanCorruptIntent},
		{"remote intent", func(w *world) {
			w.write("lifecycle-reclaims/reclaim.x.json", guardJSON(remoteHolder, "x"))
		}, lease.Refused, lease.RefusalLifecycleUnverifiable, lease.HumanRemoteRecord},
		{"live intent is busy", func(w *world) {
			w.table.SetLive(holder)
			w.write("lifecycle-reclaims/reclaim.x.json", guardJSON(holder, "x"))
		}, lease.Refused, lease.RefusalLifecycleBusy, lease.HumanNone},
		{"stale guard is reclaimed", func(w *world) { w.write("receiver.lifecycle.guard.json", guardJSON(holder, "g")) },
			lease.Acquired, "", lease.HumanNone},
		{"stale intent is removed", func(w *world) { w.write("lifecycle-reclaims/reclaim.x.json", guardJSON(holder, "x")) },
			lease.Acquired, "", lease.HumanNone},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			m := w.managerWith(p, 40*time.Millisecond)
			tc.setup(w)
			guardBefore, guardErr := os.ReadFile(w.path("receiver.lifecycle.guard.json"))
			result := w.acquire(m)
			require.Equal(t, tc.kind, result.Kind, "%+v", result)
			require.Equal(t, tc.reason, result.Refusal.Reason)
			require.Equal(t, tc.human, result.Refusal.Human)
			if tc.kind == lease.Refused {
				_, statErr := os.Lstat(w.path("receiver.lock"))
				require.ErrorIs(t, statErr, os.ErrNotExist)
				if guardErr == nil {
					require.Equal(t, string(guardBefore), w.read("receiver.lifecycle.guard.json"), "a refused guard is left alone")
				}
				return
			}
			require.Empty(t, w.names("lifecycle-reclaims"), "intents are withdrawn or removed")
			if guardErr == nil {
				quarantined := w.names("quarantine")
				require.Len(t, quarantined, 1)
				require.True(t, strings.HasPrefix(quarantined[0], "lifecycle.g."), quarantined[0])
				require.Equal(t, string(guardBefore), w.read("quarantine/"+quarantined[0]))
			}
		})
	}
}

func TestGuardHolderDyingDuringTheWaitIsReclaimed(t *testing.T) {
	w := newWorld(t)
	holder := leasetest.Identity(7)
	w.table.SetLive(holder)
	w.write("receiver.lifecycle.guard.json", guardJSON(holder, "g"))
	w.clock.OnSleep(func(index int, _ time.Duration) {
		if index == 3 {
			w.table.Kill(7)
		}
	})
	result := w.acquire(w.manager(leasetest.Identity(1)))
	require.Equal(t, lease.Acquired, result.Kind)
	sleeps, _ := w.clock.Sleeps()
	require.Equal(t, 3, sleeps)
}

func TestCancelledContextEndsTheWait(t *testing.T) {
	w := newWorld(t)
	holder := leasetest.Identity(7)
	w.table.SetLive(holder)
	w.write("receiver.lifecycle.guard.json", guardJSON(holder, "g"))
	ctx, cancel := context.WithCancel(context.Background())
	w.clock.OnSleep(func(index int, _ time.Duration) {
		if index == 2 {
			cancel()
		}
	})
	m := w.manager(leasetest.Identity(1))
	for _, dir := range []string{"quarantine", "lifecycle-reclaims"} {
		require.NoError(t, os.MkdirAll(w.path(dir), 0o700))
	}
	before := w.tree()
	_, err := m.Acquire(ctx, request)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, before, w.tree())
	sleeps, _ := w.clock.Sleeps()
	require.Equal(t, 2, sleeps)
}

func TestTwoReclaimsInOneAcquireAreBothReported(t *testing.T) {
	w := newWorld(t)
	p, q, r := leasetest.Identity(1), leasetest.Identity(2), leasetest.Identity(3)
	first := w.acquire(w.manager(p)).Owner
	second := ownerJSON(q, "00000000-0000-4000-8000-0000000000aa", 7)
	rm := w.manager(r)
	w.table.Kill(1)
	w.table.Kill(2)
	planted := false
	// A foreign writer that ignores the guard drops a second stale owner
	// right after the first is moved into quarantine.
	w.fs.After(func(op leasetest.Op, err error) {
		if op.Name == "RenameNoReplace" && op.Paths[0] == w.path("receiver.lock") && err == nil && !planted {
			planted = true
			w.write("receiver.lock/owner.json", second)
		}
	})
	result := w.acquire(rm)
	require.Equal(t, lease.Acquired, result.Kind)
	require.Len(t, result.Reclaimed, 2)
	require.Equal(t, first, result.Reclaimed[0].Owner)
	require.Equal(t, "00000000-0000-4000-8000-0000000000aa", result.Reclaimed[1].Owner.Generation)
	require.Equal(t, uint64(8), result.Owner.Epoch, "the epoch exceeds every reclaimed owner's")
	require.Len(t, w.names("quarantine"), 2)
}

func TestEpochsStrictlyIncrease(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	var epochs []uint64
	for round := 0; round < 6; round++ {
		id := leasetest.Identity(10 + round)
		m := w.manager(id)
		result := w.acquire(m)
		require.Equal(t, lease.Acquired, result.Kind)
		epochs = append(epochs, result.Owner.Epoch)
		switch round % 3 {
		case 0: // released
			_, err := m.Release(ctx, result.Owner.Generation)
			require.NoError(t, err)
		case 1: // dies, reclaimed by the next round
			w.table.Kill(id.PID)
		case 2: // epoch file lost: the owner's epoch still counts
			w.table.Kill(id.PID)
			require.NoError(t, os.Remove(w.path("receiver.epoch.json")))
		}
	}
	require.Equal(t, []uint64{1, 2, 3, 4, 5, 6}, epochs)
	w.write("receiver.epoch.json", `{"epoch":"x","schema":1}`)
	result := w.acquire(w.manager(leasetest.Identity(99)))
	require.Equal(t, lease.Refused, result.Kind)
	require.Equal(t, lease.RefusalCorruptEpoch, result.Refusal.Reason)
	require.Equal(t, lease.HumanCorruptEpoch, result.Refusal.Human)
}

func TestLeftoversAreRemovedOnlyWhenProvablyAbandoned(t *testing.T) {
	w := newWorld(t)
	dead, live := leasetest.Identity(7), leasetest.Identity(8)
	w.table.SetLive(live)
	uuid := "00000000-0000-4000-8000-00000000beef"
	w.write(".receiver.prepare-abc/owner.json", "{}")
	w.write(".receiver.prepare-abc/.tmp-owner-"+uuid, "{")
	w.write(".receiver.released-gen-1/owner.json", "{}")
	w.write(".receiver.prepare-odd/sub/file", "x")
	w.write(".tmp-epoch-"+uuid, "{")
	w.write(".tmp-lg.4026531836.7.1007.host-a-"+uuid, "dead writer's guard temp")
	w.write(".tmp-lg.4026531836.8.1008.host-a-"+uuid, "live writer's guard temp")
	w.write(".tmp-lg.4026531836.7.1007.host-b-"+uuid, "remote writer's temp")
	w.write("lifecycle-reclaims/.tmp-lg.4026531836.7.1007.host-a-"+uuid, "dead writer's intent temp")
	w.write(".tmp-other-"+uuid, "not ours")
	_ = dead
	result := w.acquire(w.manager(leasetest.Identity(1)))
	require.Equal(t, lease.Acquired, result.Kind)
	require.Equal(t, []string{
		".receiver.prepare-odd",
		".tmp-lg.4026531836.7.1007.host-b-" + uuid,
		".tmp-lg.4026531836.8.1008.host-a-" + uuid,
		".tmp-other-" + uuid,
		"lifecycle-reclaims", "quarantine", "receiver.epoch.issued.json", "receiver.epoch.json", "receiver.lock",
	}, w.names())
	require.Empty(t, w.names("lifecycle-reclaims"))
}

func TestDurabilityOrder(t *testing.T) {
	w := newWorld(t)
	p := leasetest.Identity(1)
	w.acquire(w.manager(p))
	ops := w.fs.Ops()
	dir := filepath.Dir(w.ns)
	require.NoError(t, leasetest.SyncedAfter(ops, "Mkdir", w.ns, w.ns), "a new namespace is fsynced")
	require.NoError(t, leasetest.SyncedAfter(ops, "Mkdir", w.ns, dir), "and so is its parent")
	require.NoError(t, leasetest.SyncedAfter(ops, "Mkdir", w.path("quarantine"), w.ns))
	require.NoError(t, leasetest.SyncedAfter(ops, "Mkdir", w.path("lifecycle-reclaims"), w.ns))

	w.table.Kill(1)
	w.fs.ResetOps()
	result := w.acquire(w.manager(leasetest.Identity(2)))
	require.Len(t, result.Reclaimed, 1)
	ops = w.fs.Ops()
	// The epoch files prove the namespace durable: the call that wrote
	// them had fsynced the parent first.
	require.Error(t, leasetest.SyncedAfter(append([]leasetest.Op{{Name: "Start", Paths: []string{w.ns}}}, ops...),
		"Start", w.ns, dir), "a namespace with epoch files is known durable")
	target := result.Reclaimed[0].QuarantinePath
	require.NoError(t, leasetest.SyncedAfter(ops, "RenameNoReplace", target, w.ns), "source directory fsynced")
	require.NoError(t, leasetest.SyncedAfter(ops, "RenameNoReplace", target, w.path("quarantine")), "target directory fsynced")
	epochWrite, publish := -1, -1
	for i, op := range ops {
		if op.Name == "Rename" && op.Paths[1] == w.path("receiver.epoch.json") {
			epochWrite = i
		}
		if op.Name == "RenameNoReplace" && op.Paths[1] == w.path("receiver.lock") {
			publish = i
		}
	}
	require.True(t, epochWrite >= 0 && publish > epochWrite, "the epoch is durable BEFORE the owner is published")
	require.NoError(t, leasetest.SyncedAfter(ops[:publish], "Rename", w.path("receiver.epoch.json"), w.ns))
}

// A namespace that exists without epoch files may have lost its creator
// between the mkdir and the parent's fsync (found by the simulator: a power
// loss then took the epoch file away and an epoch was granted twice), so
// the call fsyncs the parent before it writes anything in it.
func TestANamespaceWithoutEpochFilesIsMadeDurable(t *testing.T) {
	w := newWorld(t)
	for _, dir := range []string{w.ns, w.path("quarantine"), w.path("lifecycle-reclaims")} {
		require.NoError(t, os.Mkdir(dir, 0o700))
	}
	w.fs.ResetOps()
	require.Equal(t, lease.Acquired, w.acquire(w.manager(leasetest.Identity(1))).Kind)
	ops := append([]leasetest.Op{{Name: "Start", Paths: []string{w.ns}}}, w.fs.Ops()...)
	require.NoError(t, leasetest.SyncedAfter(ops, "Start", w.ns, filepath.Dir(w.ns)))
	firstWrite := opIndex(ops, "Rename", w.path("receiver.epoch.issued.json"))
	require.NoError(t, leasetest.SyncedAfter(ops[:firstWrite], "Start", w.ns, filepath.Dir(w.ns)),
		"the parent is fsynced before the first epoch file is written")
}

func TestCurrentIdentityProblemsAreErrors(t *testing.T) {
	w := newWorld(t)
	unclean := leasetest.Identity(1)
	unclean.Executable = "/usr/local//bin/../bin/leasekit"
	result := w.acquire(w.manager(unclean))
	require.Equal(t, lease.Acquired, result.Kind)
	require.Equal(t, "/usr/local/bin/leasekit", result.Owner.Executable)

	w.table.FailCurrent(errors.New("no /proc"))
	m, err := lease.NewManager(lease.Config{Namespace: w.ns, RootID: rootID, FS: w.fs, Clock: w.clock,
		Inspector: w.table, IDs: w.ids})
	require.NoError(t, err)
	_, err = m.Acquire(context.Background(), request)
	require.ErrorContains(t, err, "no /proc")

	invalid := leasetest.Identity(2)
	invalid.Executable = "leasekit"
	_, err = w.manager(invalid).Release(context.Background(), result.Owner.Generation)
	require.ErrorContains(t, err, "not absolute")
}

func TestGuardRemovedUnderTheHolderIsReported(t *testing.T) {
	w := newWorld(t)
	m := w.manager(leasetest.Identity(1))
	owner := w.acquire(m).Owner
	err := m.WithCurrentLease(context.Background(), owner.Generation, func(context.Context, lease.Owner) error {
		return os.Remove(w.path("receiver.lifecycle.guard.json"))
	})
	var lost *lease.GuardLostError
	require.ErrorAs(t, err, &lost)
	require.Contains(t, lost.Why, "gone")
}
