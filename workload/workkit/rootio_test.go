package workkit

import (
	"testing"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/sim"
)

// onVolume runs look in a world's setup, on a fresh volume with the
// directory /d.
func onVolume(t *testing.T, look func(volume *sim.Volume) error) {
	t.Helper()
	result := sim.Run(sim.Config{Seed: 1, StepsMax: 10, Setup: func(w *sim.World) error {
		volume := w.AddVolume("disk")
		volume.FS().MkdirAll("/d", 0o700, 0)
		return look(volume)
	}})
	if result.Outcome != sim.OutcomeOK {
		t.Fatalf("%v: %s", result.Outcome, result.Message)
	}
}

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
			onVolume(t, func(volume *sim.Volume) error {
				root := volume.Root()
				if err := WriteRoot(root, "/d/f", lease.O_CREATE|lease.O_EXCL, []byte("x")); err != nil {
					return err
				}
				var u Unmoved
				still := func(want bool, when string) {
					if u.Still(volume) != want {
						t.Errorf("Still is %v %s", !want, when)
					}
				}
				still(false, "before any Mark")
				u.Mark(volume)
				if _, err := ReadRoot(root, "/d/f"); err != nil {
					return err
				}
				still(true, "after a read (a read changes nothing)")
				if err := c.change(root); err != nil {
					return err
				}
				still(false, "after the change")
				u.Mark(volume)
				still(true, "after a Mark")
				u.Forget()
				still(false, "after Forget")
				return nil
			})
		})
	}
}
