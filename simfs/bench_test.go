package simfs_test

import (
	"testing"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/simfs"
)

// BenchmarkLeaseMix runs the operation mix of one lease acquire/renew/
// release round: write a temp owner file, fsync it, rename it into place,
// fsync the directory, stat and read the owner, list the directory, and
// remove a released marker. It reports simple FS calls per second.
func BenchmarkLeaseMix(b *testing.B) {
	f := simfs.New(simfs.Options{Dev: 1})
	f.MkdirAll("/state/lease", 0o700, 1000)
	v := f.View(1000)
	payload := []byte(`{"generation":"0b7e1d0c-4d1a-4c52-8f63-2f1c4d5e6a7b","epoch":42,"pid":1234}`)
	buf := make([]byte, 256)
	const opsPerRound = 17
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		fl, err := v.OpenFile("/state/lease/.owner.tmp", lease.O_WRONLY|lease.O_CREATE|lease.O_EXCL, 0o600) // 1
		if err != nil {
			b.Fatal(err)
		}
		fl.Write(payload)                                                                 // 2
		fl.Sync()                                                                         // 3
		fl.Close()                                                                        // 4
		if err := v.Rename("/state/lease/.owner.tmp", "/state/lease/owner"); err != nil { // 5
			b.Fatal(err)
		}
		d, _ := v.OpenFile("/state/lease", lease.O_RDONLY, 0)       // 6
		d.Sync()                                                    // 7
		d.Close()                                                   // 8
		v.Lstat("/state/lease/owner")                               // 9
		r, _ := v.OpenFile("/state/lease/owner", lease.O_RDONLY, 0) // 10
		r.Read(buf)                                                 // 11
		r.Close()                                                   // 12
		v.Link("/state/lease/owner", "/state/lease/.released")      // 13
		v.Remove("/state/lease/.released")                          // 14
		v.Stat("/state/lease")                                      // 15
		v.Lstat("/state/lease/missing")                             // 16 (ENOENT)
	}
	b.StopTimer()
	ops := float64(b.N) * opsPerRound
	b.ReportMetric(ops/b.Elapsed().Seconds(), "ops/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/ops, "ns/op-simple")
}

// BenchmarkHash measures the determinism self-check's per-step cost on a
// lease-sized tree with pending work.
func BenchmarkHash(b *testing.B) {
	f := simfs.New(simfs.Options{Dev: 1})
	f.MkdirAll("/state/lease/quarantine", 0o700, 0)
	v := f.View(0)
	for _, name := range []string{"owner", "guard", "intent", ".tmp-1", ".tmp-2", "quarantine/old"} {
		fl, err := v.OpenFile("/state/lease/"+name, lease.O_WRONLY|lease.O_CREATE, 0o600)
		if err != nil {
			b.Fatal(err)
		}
		fl.Write([]byte(`{"generation":"0b7e1d0c-4d1a-4c52-8f63-2f1c4d5e6a7b"}`))
		fl.Close()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f.Hash()
	}
}

// BenchmarkUnsyncedDirLog measures fsync cost while another directory piles
// up pending effects that nothing ever syncs (a buggy protocol): the log
// grows, but an fsync must still cost only its own effects.
func BenchmarkUnsyncedDirLog(b *testing.B) {
	f := simfs.New(simfs.Options{Dev: 1})
	f.MkdirAll("/synced", 0o700, 0)
	f.MkdirAll("/unsynced", 0o700, 0)
	v := f.View(0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		fl, _ := v.OpenFile("/unsynced/x", lease.O_WRONLY|lease.O_CREATE, 0o600)
		fl.Close()
		v.Rename("/unsynced/x", "/unsynced/y")
		fl, _ = v.OpenFile("/synced/x", lease.O_WRONLY|lease.O_CREATE, 0o600)
		fl.Close()
		d, _ := v.OpenFile("/synced", lease.O_RDONLY, 0)
		d.Sync()
		d.Close()
	}
	b.ReportMetric(float64(f.Pending()), "pending-at-end")
}

// hotFS returns a lease-shaped tree: /state/lease holding five small files,
// as the engines keep it, with everything durable.
func hotFS(b *testing.B) (*simfs.FS, lease.FS) {
	b.Helper()
	f := simfs.New(simfs.Options{Dev: 1})
	f.MkdirAll("/state/lease", 0o700, 1000)
	v := f.View(1000)
	for _, name := range []string{"owner", "guard", "intent", "marker", "reclaims"} {
		fl, err := v.OpenFile("/state/lease/"+name, lease.O_WRONLY|lease.O_CREATE, 0o600)
		if err != nil {
			b.Fatal(err)
		}
		fl.Write([]byte(`{"generation":"0b7e1d0c-4d1a-4c52-8f63-2f1c4d5e6a7b","epoch":42}`))
		fl.Sync()
		fl.Close()
	}
	d, err := v.OpenFile("/state/lease", lease.O_RDONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	d.Sync()
	d.Close()
	return f, v
}

// BenchmarkOpenReadClose is the engines' most common call sequence: read a
// small record file whole.
func BenchmarkOpenReadClose(b *testing.B) {
	_, v := hotFS(b)
	buf := make([]byte, 256)
	b.ReportAllocs()
	for b.Loop() {
		fl, err := v.OpenFile("/state/lease/owner", lease.O_RDONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		fl.Read(buf)
		fl.Close()
	}
}

// BenchmarkLstat stats an existing file and a missing one (ENOENT).
func BenchmarkLstat(b *testing.B) {
	_, v := hotFS(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Lstat("/state/lease/owner"); err != nil {
			b.Fatal(err)
		}
		v.Lstat("/state/lease/missing")
	}
}

// BenchmarkFsyncFile rewrites a small file (O_TRUNC), fsyncs it and closes
// it, as a record update does.
func BenchmarkFsyncFile(b *testing.B) {
	_, v := hotFS(b)
	payload := []byte(`{"generation":"1"}`)
	b.ReportAllocs()
	for b.Loop() {
		fl, err := v.OpenFile("/state/lease/owner", lease.O_WRONLY|lease.O_TRUNC, 0)
		if err != nil {
			b.Fatal(err)
		}
		fl.Write(payload)
		if err := fl.Sync(); err != nil {
			b.Fatal(err)
		}
		fl.Close()
	}
}

// BenchmarkRenameFsyncDir is the commit step of an atomic replace: rename a
// temp file over the record and fsync the directory.
func BenchmarkRenameFsyncDir(b *testing.B) {
	_, v := hotFS(b)
	d, err := v.OpenFile("/state/lease", lease.O_RDONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := v.Rename("/state/lease/owner", "/state/lease/.owner.tmp"); err != nil {
			b.Fatal(err)
		}
		if err := v.Rename("/state/lease/.owner.tmp", "/state/lease/owner"); err != nil {
			b.Fatal(err)
		}
		if err := d.Sync(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDirHandle uses an open directory handle: openat+close, fstatat
// and getdents, as the cleanup and reclaim paths do.
func BenchmarkDirHandle(b *testing.B) {
	_, v := hotFS(b)
	d, err := v.OpenFile("/state/lease", lease.O_RDONLY|lease.O_DIRECTORY, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		fl, err := d.OpenAt("guard", lease.O_RDONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		fl.Close()
		if _, err := d.StatAt("intent"); err != nil {
			b.Fatal(err)
		}
		if _, err := d.ReadDir(); err != nil {
			b.Fatal(err)
		}
	}
}
