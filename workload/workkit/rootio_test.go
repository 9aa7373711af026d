package workkit

import (
	"testing"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/sim"
	"github.com/stretchr/testify/require"
)

// TestUnmovedSeesEveryChangeALookCouldRead: a check may skip its root read
// only while Still holds, so Still must turn false at every change of a
// name or of a file's bytes, and at Forget.
func TestUnmovedSeesEveryChangeALookCouldRead(t *testing.T) {
	changes := []struct {
		name   string
		change func(root lease.FS) error
	}{
		{"write in place", func(root lease.FS) error { return WriteRoot(root, "/d/f", 0, []byte("y")) }},
		{"create", func(root lease.FS) error { return WriteRoot(root, "/d/g", lease.O_CREATE|lease.O_EXCL, []byte("x")) }},
		{"rename", func(root lease.FS) error { return root.Rename("/d/f", "/d/h") }},
		{"remove", func(root lease.FS) error { return root.Remove("/d/f") }},
		{"symlink", func(root lease.FS) error { return root.Symlink("/d/f", "/d/l") }},
	}
	for _, c := range changes {
		t.Run(c.name, func(t *testing.T) {
			result := sim.Run(sim.Config{Seed: 1, StepsMax: 10, Setup: func(w *sim.World) error {
				volume := w.AddVolume("disk")
				volume.FS().MkdirAll("/d", 0o700, 0)
				root := volume.Root()
				require.NoError(t, WriteRoot(root, "/d/f", lease.O_CREATE|lease.O_EXCL, []byte("x")))
				var u Unmoved
				require.False(t, u.Still(volume), "before any Mark")
				u.Mark(volume)
				_, err := ReadRoot(root, "/d/f")
				require.NoError(t, err)
				require.True(t, u.Still(volume), "a read changes nothing")
				require.NoError(t, c.change(root))
				require.False(t, u.Still(volume), "after the change")
				u.Mark(volume)
				require.True(t, u.Still(volume))
				u.Forget()
				require.False(t, u.Still(volume), "after Forget")
				return nil
			}})
			require.Equal(t, sim.OutcomeOK, result.Outcome, result.Message)
		})
	}
}
