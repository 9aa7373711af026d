package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// On a read-only mount every lease command exits 4 with an EROFS from the
// guard's temp file, where flock works with an existing lock file (issue
// 30 item 3). It is now a refusal (exit 3) that says why and what to do.
// The mount is a read-only bind mount of a namespace made writable first
// (root only: without CAP_SYS_ADMIN the test says so and skips, failing
// under LEASEKIT_REQUIRE_MOUNT=1).
func TestReadOnlyNamespaceIsAClearRefusal(t *testing.T) {
	source, target := t.TempDir(), t.TempDir()
	ns := filepath.Join(source, "ns")
	if got := run(t, "run", "-n", ns, "true"); got.code != 0 {
		t.Fatalf("run on the writable namespace: exit %d; %q", got.code, got.stderr)
	}
	if err := unix.Mount(source, target, "", unix.MS_BIND, ""); err != nil {
		if os.Getenv("LEASEKIT_REQUIRE_MOUNT") != "" {
			t.Fatalf("bind mount: %v", err)
		}
		t.Skipf("bind mount needs CAP_SYS_ADMIN: %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(target, unix.MNT_DETACH) })
	if err := unix.Mount("", target, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
		t.Fatalf("remount read-only: %v", err)
	}
	for _, args := range [][]string{{"run", "-n", filepath.Join(target, "ns"), "true"}, {"acquire", "--dir", filepath.Join(target, "ns")}} {
		got := run(t, args...)
		if got.code != exitRefused || !strings.Contains(got.stderr, "read-only filesystem: a lease writes its records there") {
			t.Fatalf("%v: exit %d, want %d with the read-only advice; stderr %q", args, got.code, exitRefused, got.stderr)
		}
	}
}
