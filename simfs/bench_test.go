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
