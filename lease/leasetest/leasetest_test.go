package leasetest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/leasekit/leasekit/internal/require"
	"github.com/leasekit/leasekit/internal/statefile"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/leasetest"
	"github.com/leasekit/leasekit/lease/osenv"
)

func TestClockSleepAdvancesAndHonoursContext(t *testing.T) {
	clock := leasetest.NewClock()
	start, wall := clock.Monotonic(), clock.Now()
	require.NoError(t, clock.Sleep(context.Background(), 5*time.Millisecond))
	require.Equal(t, start+5*time.Millisecond, clock.Monotonic())
	require.Equal(t, wall.Add(5*time.Millisecond), clock.Now())
	clock.StepWall(-time.Hour)
	require.Equal(t, start+5*time.Millisecond, clock.Monotonic(), "a wall step never moves monotonic time")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, clock.Sleep(ctx, time.Second), context.Canceled)
	count, total := clock.Sleeps()
	require.Equal(t, 1, count)
	require.Equal(t, 5*time.Millisecond, total)
	require.Panics(t, func() { clock.Advance(-1) })
}

func TestIDsAreValidSequentialUUIDs(t *testing.T) {
	ids, other := leasetest.NewIDs(), leasetest.NewIDsWithPrefix(0xabc)
	first, second := ids.NewID(), ids.NewID()
	require.Equal(t, "00000000-0000-4000-8000-000000000001", first)
	require.Equal(t, "00000000-0000-4000-8000-000000000002", second)
	require.Equal(t, "00000abc-0000-4000-8000-000000000001", other.NewID())
	require.True(t, statefile.IsUUIDv4(first), first)
	require.Equal(t, uint64(2), ids.Issued())
}

func TestInspectorScriptsTheProcessTable(t *testing.T) {
	me := leasetest.Identity(1)
	require.NoError(t, me.Validate())
	table := leasetest.NewInspector(me)
	current, err := table.Current()
	require.NoError(t, err)
	require.Equal(t, me, current)
	require.Equal(t, lease.InspectLive, table.Inspect(1).Kind)
	require.Equal(t, lease.InspectAbsent, table.Inspect(2).Kind, "unknown PIDs are absent")
	other := table.As(leasetest.Identity(2))
	viewCurrent, _ := other.Current()
	require.Equal(t, 2, viewCurrent.PID)
	require.Equal(t, []int{1, 2}, table.LivePIDs())
	table.Kill(1)
	require.Equal(t, lease.InspectAbsent, other.Inspect(1).Kind)
	table.Set(2, leasetest.Zombie(leasetest.Identity(2), 1))
	require.Equal(t, lease.StateZombie, table.Inspect(2).State)
	require.Equal(t, 2, table.Inspected(1))
	require.Equal(t, 2, table.Inspected(2))
}

// fatalRecorder is a leasetest.TB that records Fatal instead of stopping.
type fatalRecorder struct{ fatals []string }

func (r *fatalRecorder) Helper()           {}
func (r *fatalRecorder) Fatal(args ...any) { r.fatals = append(r.fatals, fmt.Sprint(args...)) }

func TestWriteNewAndReadOrNil(t *testing.T) {
	fsys := osenv.NewFS()
	name := filepath.Join(t.TempDir(), "record.json")
	require.Nil(t, leasetest.ReadOrNil(t, fsys, name), "an absent file reads as nil")
	leasetest.WriteNew(t, fsys, name, []byte("planted\n"))
	require.Equal(t, []byte("planted\n"), leasetest.ReadOrNil(t, fsys, name))
	info, err := os.Stat(name)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	recorder := &fatalRecorder{}
	leasetest.WriteNew(recorder, fsys, name, []byte("again\n"))
	require.Len(t, recorder.fatals, 1, "WriteNew is create-only")
	require.Equal(t, []byte("planted\n"), leasetest.ReadOrNil(t, fsys, name), "the existing file is untouched")
	leasetest.ReadOrNil(recorder, fsys, filepath.Join(name, "not-a-dir"))
	require.Len(t, recorder.fatals, 2, "an error other than absence fails the test")
}
