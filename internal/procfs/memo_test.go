package procfs

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/leasekit/leasekit/lease"
	"pgregory.net/rapid"
)

// statLine renders a stat line with the fields Inspect reads.
func statLine(pid int, state byte, threads int, start string) string {
	return fmt.Sprintf("%d (w x) %c 1 %d %d 0 -1 4194560 0 0 0 0 3 1 0 0 20 0 %d 0 %s 12345 321 0 0\n",
		pid, state, pid, pid, threads, start)
}

// TestSingleCallerEqualsNew: a single-caller Table answers every
// inspection as a plain one over the same files, while PIDs change hands
// (new start times), the boot id and namespaces change, processes vanish
// and more PIDs are inspected than its memo keeps.
func TestSingleCallerEqualsNew(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := newMemProc("")
		delete(m.files, "/proc/4242/stat")
		single, plain := NewSingleCaller("/proc", m), New("/proc", m)
		starts := []string{"100", "101", "0100", "18446744073709551615", "x1"}
		for step := range rapid.IntRange(1, 40).Draw(t, "steps") {
			pid := rapid.IntRange(1, memoPIDs+3).Draw(t, "pid")
			dir := "/proc/" + strconv.Itoa(pid)
			switch rapid.IntRange(0, 5).Draw(t, "change") {
			case 0: // the PID changes hands, or is first spawned
				m.files[dir+"/stat"] = statLine(pid, rapid.SampledFrom([]byte("SZT")).Draw(t, "state"),
					rapid.IntRange(1, 3).Draw(t, "threads"), rapid.SampledFrom(starts).Draw(t, "start"))
				m.files[dir+"/status"] = goldenStatus
				m.links[dir+"/exe"] = exePath
				m.stats[dir+"/exe"] = lease.FileInfo{Dev: exeDev, Ino: exeIno}
				m.stats[dir+"/ns/pid"] = lease.FileInfo{Ino: uint64(rapid.IntRange(1, 3).Draw(t, "ns"))}
			case 1: // it exits and is reaped
				for _, table := range []map[string]string{m.files, m.links} {
					for path := range table {
						if strings.HasPrefix(path, dir+"/") {
							delete(table, path)
						}
					}
				}
			case 2: // a reboot
				m.files["/proc/sys/kernel/random/boot_id"] = rapid.SampledFrom([]string{"a\n", "b", " a "}).Draw(t, "boot")
			}
			got, want := single.Inspect(pid), plain.Inspect(pid)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("step %d, PID %d: single caller %+v, plain %+v", step, pid, got, want)
			}
		}
	})
}

// TestIsDecimalTicksEqualsParseUint holds the start-time check to
// strconv.ParseUint(s, 10, 64).
func TestIsDecimalTicksEqualsParseUint(t *testing.T) {
	check := func(t interface{ Fatalf(string, ...any) }, s string) {
		_, err := strconv.ParseUint(s, 10, 64)
		if got, want := isDecimalTicks([]byte(s)), err == nil; got != want {
			t.Fatalf("%q: %v, ParseUint says %v", s, got, want)
		}
	}
	for _, s := range []string{"", "0", "00", "7", "+7", "-0", "1_0", "0x10", " 1", "18446744073709551615",
		"18446744073709551616", "99999999999999999999", "018446744073709551615", "000000000000000000000001",
		"184467440737095516150", "1844674407370955161"} {
		check(t, s)
	}
	rapid.Check(t, func(t *rapid.T) {
		check(t, rapid.StringOfN(rapid.SampledFrom([]rune("0123456789+_ x")), 0, 24, -1).Draw(t, "s"))
	})
}
