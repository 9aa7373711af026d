//go:build linux

package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRunOnFUSEWithoutNoReplace runs leasereal on a real FUSE filesystem
// (bindfs, a passthrough) that answers EINVAL to RENAME_NOREPLACE (issue
// 19, item 3: every call exited 4 there). It needs root, /dev/fuse and
// bindfs(1); without them it is skipped with the reason, unless
// LEASEKIT_REQUIRE_FUSE=1 (CI installs bindfs and sets it) makes that a
// failure.
func TestRunOnFUSEWithoutNoReplace(t *testing.T) {
	bindfs, err := exec.LookPath("bindfs")
	_, fuseErr := os.Stat("/dev/fuse")
	var missing string
	switch {
	case err != nil:
		missing = "bindfs(1) is not installed (apt-get install bindfs)"
	case fuseErr != nil:
		missing = "no /dev/fuse: " + fuseErr.Error()
	case os.Geteuid() != 0:
		missing = "mounting needs root"
	}
	if missing != "" {
		if os.Getenv("LEASEKIT_REQUIRE_FUSE") == "1" {
			t.Fatalf("LEASEKIT_REQUIRE_FUSE=1 but %s", missing)
		}
		t.Skipf("%s; the same fallback is covered without FUSE by lease/osenv's TestLeaseOverFilesystemWithoutNoReplace", missing)
	}
	source, mount := t.TempDir(), t.TempDir()
	if output, err := exec.Command(bindfs, source, mount).CombinedOutput(); err != nil {
		t.Fatalf("bindfs %s %s: %v: %s", source, mount, err, output)
	}
	t.Cleanup(func() {
		if output, err := exec.Command("umount", mount).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", mount, err, output)
		}
	})
	probe := filepath.Join(mount, "probe")
	if err := os.WriteFile(probe, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	err = unix.Renameat2(unix.AT_FDCWD, probe, unix.AT_FDCWD, probe+".moved", unix.RENAME_NOREPLACE)
	if !errors.Is(err, unix.EINVAL) {
		t.Fatalf("renameat2(RENAME_NOREPLACE) on bindfs gave %v, not EINVAL: this mount no longer exercises the fallback", err)
	}

	dir := filepath.Join(mount, "job.lease")
	for round := 1; round <= 2; round++ {
		if got := run(t, "run", "-n", dir, "true"); got.code != 0 {
			t.Fatalf("run %d on FUSE: exit %d: %s", round, got.code, got.stderr)
		}
	}
	holder := decode[acquireJSON](t, run(t, "acquire", "--dir", dir).stdout)
	if holder.Result != "acquired" || holder.Owner.Epoch != 3 {
		t.Fatalf("acquire on FUSE: %+v", holder)
	}
	if got := run(t, "run", "-n", dir, "true"); got.code != exitConflict {
		t.Fatalf("run against a holder on FUSE: exit %d: %s", got.code, got.stderr)
	}
	if got := run(t, "release", "--dir", dir, "--generation", holder.Owner.Generation); got.code != 0 {
		t.Fatalf("release on FUSE: exit %d: %s", got.code, got.stderr)
	}
	if out := decode[inspectJSON](t, run(t, "inspect", "--dir", dir).stdout); out.State != "empty" {
		t.Fatalf("inspect on FUSE: %+v", out)
	}
}
