package procfs

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"

	"github.com/leasekit/leasekit/internal/require"

	"github.com/leasekit/leasekit/lease"
)

// Golden /proc/PID/stat lines, as Linux 6.x prints them (fields 1 to 52).
const (
	goldenSleeping = "4242 (leasekit) S 1 4242 4242 0 -1 4194560 512 0 0 0 7 3 0 0 20 0 3 0 987654 12345678 321 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	// systemd's per-user helper: parentheses inside the comm.
	goldenSdPam = "4242 ((sd-pam)) S 1 4242 4242 0 -1 1077936448 45 0 0 0 0 0 0 0 20 0 1 0 987654 104857600 900 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	// A comm that fakes fields: counted from the first ")" it would read
	// state S, 0 threads and starttime 3 (stime).
	goldenFakeFields = "4242 () S 1 1 1 1 1 1) R 1 4242 4242 0 -1 4194560 512 0 0 0 7 3 0 0 20 0 2 0 987654 12345678 321 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	// A zombie leader: exited, two threads still counted.
	goldenZombie = "4242 (leasekit) Z 1 4242 4242 0 -1 4227340 512 0 0 0 7 3 0 0 20 0 2 0 987654 0 0 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	goldenStatus = "Name:\tleasekit\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4242\nNgid:\t0\nPid:\t4242\nPPid:\t1\nTracerPid:\t0\nUid:\t1000\t1000\t1000\t1000\nGid:\t1000\t1000\t1000\t1000\nThreads:\t3\n"
	goldenBootID = "6c3f2a5e-0000-4000-8000-000000000001\n"
	exePath      = "/usr/bin/leasekit"
	exeIno       = 777
	exeDev       = 0x803
	nsIno        = 4026531836
)

func TestParseStat(t *testing.T) {
	cases := []struct {
		name string
		data string
		want Stat
		err  string
	}{
		{"sleeping", goldenSleeping, Stat{State: 'S', Threads: 3, StartTime: "987654"}, ""},
		{"comm with parentheses", goldenSdPam, Stat{State: 'S', Threads: 1, StartTime: "987654"}, ""},
		{"comm faking fields", goldenFakeFields, Stat{State: 'R', Threads: 2, StartTime: "987654"}, ""},
		{"zombie leader", goldenZombie, Stat{State: 'Z', Threads: 2, StartTime: "987654"}, ""},
		{"empty comm", strings.Replace(goldenSleeping, "(leasekit)", "()", 1), Stat{State: 'S', Threads: 3, StartTime: "987654"}, ""},
		{"another PID", strings.Replace(goldenSleeping, "4242 (", "4243 (", 1), Stat{}, `PID field "4243"`},
		{"no parentheses", "4242 leasekit S 1", Stat{}, "no parenthesised command name"},
		{"truncated", goldenSleeping[:60], Stat{}, "fields after the command name"},
		{"state of two letters", strings.Replace(goldenSleeping, ") S ", ") SS ", 1), Stat{}, "not one letter"},
		{"threads not a number", strings.Replace(goldenSleeping, " 20 0 3 0 ", " 20 0 x 0 ", 1), Stat{}, "num_threads"},
		{"starttime signed", strings.Replace(goldenSleeping, " 987654 ", " +987654 ", 1), Stat{}, "starttime"},
		{"empty", "", Stat{}, "no parenthesised"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseStat(4242, []byte(tc.data))
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestParseUID(t *testing.T) {
	uid, err := ParseUID([]byte(goldenStatus))
	require.NoError(t, err)
	require.Equal(t, 1000, uid)
	// The kernel escapes a newline in the comm: a comm "x\nUid:\t0" never
	// starts a line of its own.
	uid, err = ParseUID([]byte("Name:\tx\\nUid:\t0\n" + goldenStatus[len("Name:\tleasekit\n"):]))
	require.NoError(t, err)
	require.Equal(t, 1000, uid)
	// A space is not escaped: a comm "Uid: 0 (x)" puts "Uid:" inside the
	// Name line, which is not the Uid line.
	uid, err = ParseUID([]byte("Name:\tUid: 0 (x)\n" + goldenStatus[len("Name:\tleasekit\n"):]))
	require.NoError(t, err)
	require.Equal(t, 1000, uid)
	_, err = ParseUID([]byte("Name:\tx\n"))
	require.ErrorContains(t, err, "no Uid line")
	_, err = ParseUID([]byte("Uid:\t-1\t0\t0\t0\n"))
	require.ErrorContains(t, err, `Uid "-1"`)
}

// memProc is a Reader over in-memory files; errs fail a path (after the
// path's before hook runs, if any).
type memProc struct {
	files  map[string]string
	links  map[string]string
	stats  map[string]lease.FileInfo
	dirs   map[string][]string
	errs   map[string]error
	before map[string]func(*memProc)
	reads  []string
}

func newMemProc(stat string) *memProc {
	m := &memProc{
		files: map[string]string{"/proc/4242/stat": stat, "/proc/4242/status": goldenStatus,
			"/proc/sys/kernel/random/boot_id": goldenBootID},
		links: map[string]string{"/proc/4242/exe": exePath},
		stats: map[string]lease.FileInfo{"/proc/4242/exe": {Dev: exeDev, Ino: exeIno},
			"/proc/4242/ns/pid": {Ino: nsIno}},
		dirs:   map[string][]string{},
		errs:   map[string]error{},
		before: map[string]func(*memProc){},
	}
	return m
}

func (m *memProc) hit(op, path string) error {
	m.reads = append(m.reads, path)
	if f := m.before[path]; f != nil {
		delete(m.before, path)
		f(m)
	}
	if err := m.errs[path]; err != nil {
		return err
	}
	return nil
}

func notExist(op, path string) error { return &fs.PathError{Op: op, Path: path, Err: syscall.ENOENT} }

func (m *memProc) ReadFile(path string) ([]byte, error) {
	if err := m.hit("open", path); err != nil {
		return nil, err
	}
	data, ok := m.files[path]
	if !ok {
		return nil, notExist("open", path)
	}
	return []byte(data), nil
}

func (m *memProc) Stat(path string) (lease.FileInfo, error) {
	if err := m.hit("stat", path); err != nil {
		return lease.FileInfo{}, err
	}
	info, ok := m.stats[path]
	if !ok {
		return lease.FileInfo{}, notExist("stat", path)
	}
	return info, nil
}

func (m *memProc) Readlink(path string) (string, error) {
	if err := m.hit("readlink", path); err != nil {
		return "", err
	}
	target, ok := m.links[path]
	if !ok {
		return "", notExist("readlink", path)
	}
	return target, nil
}

func (m *memProc) ReadDir(path string) ([]lease.DirEntry, error) {
	if err := m.hit("open", path); err != nil {
		return nil, err
	}
	names, ok := m.dirs[path]
	if !ok {
		return nil, notExist("open", path)
	}
	entries := make([]lease.DirEntry, len(names))
	for i, name := range names {
		entries[i] = lease.DirEntry{Name: name, Type: fs.ModeDir}
	}
	return entries, nil
}

func (m *memProc) Hostname() (string, error) { return "alpha", nil }

// vanish removes every /proc/4242 entry: the process was reaped.
func (m *memProc) vanish() {
	for _, table := range []map[string]string{m.files, m.links} {
		for path := range table {
			if strings.HasPrefix(path, "/proc/4242/") {
				delete(table, path)
			}
		}
	}
	for path := range m.stats {
		delete(m.stats, path)
	}
}

// esrch is ESRCH as a Reader must report it.
type esrch struct{ error }

func (e esrch) Unwrap() error        { return e.error }
func (e esrch) Is(target error) bool { return target == ErrNoSuchProcess }

var wantIdentity = lease.ProcessIdentity{PID: 4242, StartTime: "987654", BootID: "6c3f2a5e-0000-4000-8000-000000000001",
	Executable: exePath, ExecutableDev: exeDev, ExecutableIno: exeIno, Hostname: "alpha", PIDNamespace: "4026531836", UID: 1000}

func TestInspectGolden(t *testing.T) {
	deleted := wantIdentity
	deleted.Executable = exePath + " (deleted)"
	zombieSingle := wantIdentity
	zombieSingle.Executable, zombieSingle.ExecutableDev, zombieSingle.ExecutableIno = "", 0, 0
	cases := []struct {
		name    string
		stat    string
		mutate  func(m *memProc)
		want    lease.Inspection
		diagSub string
	}{
		{"live", goldenSleeping, nil,
			lease.Inspection{Kind: lease.InspectLive, Identity: wantIdentity, Threads: 3}, ""},
		{"comm with parentheses", goldenSdPam, nil,
			lease.Inspection{Kind: lease.InspectLive, Identity: wantIdentity, Threads: 1}, ""},
		{"comm faking fields", goldenFakeFields, nil,
			lease.Inspection{Kind: lease.InspectLive, Identity: wantIdentity, Threads: 2}, ""},
		{"deleted executable", goldenSleeping, func(m *memProc) { m.links["/proc/4242/exe"] = exePath + " (deleted)" },
			lease.Inspection{Kind: lease.InspectLive, Identity: deleted, Threads: 3}, ""},
		{"zombie leader borrows a live thread's exe", goldenZombie, func(m *memProc) {
			delete(m.links, "/proc/4242/exe")
			delete(m.stats, "/proc/4242/exe")
			m.dirs["/proc/4242/task"] = []string{"4242", "4243"}
			m.links["/proc/4242/task/4243/exe"] = exePath
			m.stats["/proc/4242/task/4243/exe"] = lease.FileInfo{Dev: exeDev, Ino: exeIno}
		}, lease.Inspection{Kind: lease.InspectLive, Identity: wantIdentity, State: lease.StateZombie, Threads: 2}, ""},
		{"single-threaded zombie has no executable", strings.Replace(goldenZombie, " 20 0 2 0 ", " 20 0 1 0 ", 1), func(m *memProc) {
			delete(m.links, "/proc/4242/exe")
			delete(m.stats, "/proc/4242/exe")
			m.dirs["/proc/4242/task"] = []string{"4242"}
		}, lease.Inspection{Kind: lease.InspectLive, Identity: zombieSingle, State: lease.StateZombie, Threads: 1}, ""},
		{"zombie leader whose threads have no exe either", goldenZombie, func(m *memProc) {
			delete(m.links, "/proc/4242/exe")
			delete(m.stats, "/proc/4242/exe")
		}, lease.Inspection{Kind: lease.InspectUnknown}, "missing while the process (state Z, 2 threads)"},
		{"no boot id", goldenSleeping, func(m *memProc) { delete(m.files, "/proc/sys/kernel/random/boot_id") },
			lease.Inspection{Kind: lease.InspectLive, Identity: func() lease.ProcessIdentity {
				id := wantIdentity
				id.BootID = ""
				return id
			}(), Threads: 3}, ""},
		{"absent", goldenSleeping, func(m *memProc) { m.vanish() }, lease.Inspection{Kind: lease.InspectAbsent}, ""},
		{"reaped between the first and the second read (ENOENT)", goldenZombie, func(m *memProc) {
			m.before["/proc/4242/status"] = (*memProc).vanish
		}, lease.Inspection{Kind: lease.InspectAbsent}, ""},
		{"reaped with status open (ESRCH)", goldenZombie, func(m *memProc) {
			m.errs["/proc/4242/status"] = esrch{&fs.PathError{Op: "read", Path: "/proc/4242/status", Err: syscall.ESRCH}}
		}, lease.Inspection{Kind: lease.InspectAbsent}, ""},
		{"ESRCH not marked is unknown", goldenSleeping, func(m *memProc) {
			m.errs["/proc/4242/status"] = &fs.PathError{Op: "read", Path: "/proc/4242/status", Err: syscall.ESRCH}
		}, lease.Inspection{Kind: lease.InspectUnknown}, "reading /proc/4242/status"},
		{"malformed status", goldenSleeping, func(m *memProc) { m.files["/proc/4242/status"] = "Name:\tx\n" },
			lease.Inspection{Kind: lease.InspectUnknown}, "malformed /proc/4242/status: no Uid line"},
		{"PID changed hands every time", goldenSleeping, func(m *memProc) {
			n := 0
			var reuse func(*memProc)
			reuse = func(m *memProc) {
				n++
				m.files["/proc/4242/stat"] = strings.Replace(goldenSleeping, " 987654 ", fmt.Sprintf(" %d ", 990000+n), 1)
				m.before["/proc/4242/status"] = reuse
			}
			m.before["/proc/4242/status"] = reuse
		}, lease.Inspection{Kind: lease.InspectUnknown}, "changed start time during each of 4 inspections"},
	}
	for _, file := range []string{"stat", "status", "ns/pid", "exe"} {
		for _, errno := range []syscall.Errno{syscall.EACCES, syscall.EPERM} {
			path := "/proc/4242/" + file
			cases = append(cases, struct {
				name    string
				stat    string
				mutate  func(m *memProc)
				want    lease.Inspection
				diagSub string
			}{fmt.Sprintf("%v on %s", errno, file), goldenSleeping, func(m *memProc) {
				m.errs[path] = &fs.PathError{Op: "open", Path: path, Err: errno}
			}, lease.Inspection{Kind: lease.InspectUnknown}, "permission denied reading " + path})
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := newMemProc(tc.stat)
			if tc.mutate != nil {
				tc.mutate(m)
			}
			got := New("/proc", m).Inspect(4242)
			require.Contains(t, got.Diagnostic, tc.diagSub)
			got.Diagnostic = ""
			require.Equal(t, tc.want, got)
		})
	}
}

func TestInspectPIDChangedHandsOnce(t *testing.T) {
	m := newMemProc(goldenSleeping)
	m.before["/proc/4242/status"] = func(m *memProc) {
		m.files["/proc/4242/stat"] = strings.Replace(goldenSleeping, " 987654 ", " 990001 ", 1)
	}
	got := New("/proc", m).Inspect(4242)
	require.Equal(t, lease.InspectLive, got.Kind, got.Diagnostic)
	require.Equal(t, "990001", got.Identity.StartTime, "the second attempt describes the new process")
}

func TestCurrent(t *testing.T) {
	id, err := New("/proc", newMemProc(goldenSleeping)).Current(4242)
	require.NoError(t, err)
	require.Equal(t, wantIdentity, id)
	_, err = New("/proc", newMemProc(goldenSleeping)).Current(4243)
	require.ErrorContains(t, err, "cannot inspect the current process (PID 4243): absent")
	single := newMemProc(strings.Replace(goldenZombie, " 20 0 2 0 ", " 20 0 1 0 ", 1))
	require.Panics(t, func() { _, _ = New("/proc", single).Current(4242) },
		"a caller that reads as a single-threaded zombie is a broken invariant")
}

// TestCurrentOfZombieLeaderWithThreads: when the main thread has exited
// and another thread calls, /proc/self reads Z with 2 threads; that is the
// caller's live process, its executable read through the live thread (the
// simulator found Current panicking there: a thread of a process whose
// leader returned, lease seed in testdata/seeds/lease).
func TestCurrentOfZombieLeaderWithThreads(t *testing.T) {
	m := newMemProc(goldenZombie)
	delete(m.links, "/proc/4242/exe")
	delete(m.stats, "/proc/4242/exe")
	m.dirs["/proc/4242/task"] = []string{"4242", "4243"}
	m.links["/proc/4242/task/4243/exe"] = exePath
	m.stats["/proc/4242/task/4243/exe"] = lease.FileInfo{Dev: exeDev, Ino: exeIno}
	id, err := New("/proc", m).Current(4242)
	require.NoError(t, err)
	require.Equal(t, wantIdentity, id, "the process's identity, as Inspect reads it for others")
}

func TestFailedMapsErrnos(t *testing.T) {
	cases := []struct {
		err  error
		want lease.InspectionKind
	}{
		{syscall.ENOENT, lease.InspectAbsent},
		{esrch{syscall.ESRCH}, lease.InspectAbsent},
		{syscall.EACCES, lease.InspectUnknown},
		{syscall.EPERM, lease.InspectUnknown},
		{syscall.EIO, lease.InspectUnknown},
		{errors.New("odd"), lease.InspectUnknown},
	}
	for _, tc := range cases {
		got := Failed("/proc/1/stat", &fs.PathError{Op: "open", Path: "/proc/1/stat", Err: tc.err})
		require.Equal(t, tc.want, got.Kind, "%v", tc.err)
	}
}

// FuzzParseStat: any bytes parse or fail with an error, never panic; a
// parse that succeeds reports a one-letter state, a count and a decimal
// start time, and the golden lines keep their meaning.
func FuzzParseStat(f *testing.F) {
	for _, seed := range []string{goldenSleeping, goldenSdPam, goldenFakeFields, goldenZombie, "", "(", ")", "4242 ()"} {
		f.Add(4242, []byte(seed))
	}
	f.Fuzz(func(t *testing.T, pid int, data []byte) {
		got, err := ParseStat(pid, data)
		if err != nil {
			return
		}
		if got.Threads < 0 || got.State == ' ' || got.StartTime == "" {
			t.Fatalf("parsed %q to %+v", data, got)
		}
		for _, c := range []byte(got.StartTime) {
			if c < '0' || c > '9' {
				t.Fatalf("start time %q of %q", got.StartTime, data)
			}
		}
	})
}

// FuzzParseUID: any status bytes give a uid below 2^31 or an error.
func FuzzParseUID(f *testing.F) {
	for _, seed := range []string{goldenStatus, "Uid:", "Uid:\t-1", "Name:\tUid: 0 (x)\nUid:\t5\n"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		uid, err := ParseUID(data)
		if err == nil && (uid < 0 || uid >= 1<<31) {
			t.Fatalf("uid %d from %q", uid, data)
		}
	})
}

// bootIDPath's constant for /proc is the joined path.
func TestBootIDPathIsJoined(t *testing.T) {
	for _, root := range []string{"/proc", "/host/proc", "proc"} {
		if got, want := bootIDPath(root), root+"/sys/kernel/random/boot_id"; got != want {
			t.Errorf("bootIDPath(%q) = %q, want %q", root, got, want)
		}
	}
}
