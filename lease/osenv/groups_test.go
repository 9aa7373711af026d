package osenv

import (
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/leasekit/leasekit/internal/require"
)

func TestStatGroup(t *testing.T) {
	cases := []struct {
		stat    string
		pgid    int
		running bool
		ok      bool
	}{
		{"42 (sh) S 1 42 42 0", 42, true, true},
		{"43 (a) b) (c) R 42 40 42 0", 40, true, true},
		{"44 (dead) Z 42 40 42 0", 40, false, true},
		{"45 (torn", 0, false, false},
		{"46 (short) S 1", 0, false, false},
	}
	for _, tc := range cases {
		pgid, running, ok := statGroup([]byte(tc.stat))
		require.Equal(t, tc.ok, ok, tc.stat)
		require.Equal(t, tc.pgid, pgid, tc.stat)
		require.Equal(t, tc.running, running, tc.stat)
	}
}

// A group runs while one member runs, and not after its last exits.
func TestProcessGroupsSeesAGroupUntilItsLastMemberExits(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	pgid := cmd.Process.Pid
	runs, err := ProcessGroups{}.GroupRuns(pgid)
	require.NoError(t, err)
	require.True(t, runs)
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	runs, err = ProcessGroups{}.GroupRuns(pgid)
	require.NoError(t, err)
	require.False(t, runs)
}
