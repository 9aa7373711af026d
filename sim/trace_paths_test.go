package sim

import (
	"strings"
	"testing"

	"github.com/leasekit/leasekit/lease"
)

// The trace prints both paths of a two-path call and a read at end of file
// as EOF: each row is one call and the line the trace must print for it.
func TestTracePrintsBothPathsAndEOF(t *testing.T) {
	var trace strings.Builder
	setup := func(w *World) error {
		h := w.AddHost(HostSpec{Name: "alpha", Volume: w.AddVolume("disk")})
		_, err := w.Spawn(h, ProcSpec{Name: "a"}, func(p *Proc) {
			fs := p.FS()
			f, _ := fs.OpenFile("/f", lease.O_CREATE|lease.O_RDWR, 0o644)
			_, _ = f.Write([]byte("ab"))
			_ = f.Close()
			_ = fs.Rename("/f", "/g")
			_ = fs.RenameNoReplace("/g", "/h")
			_ = fs.Link("/h", "/i")
			_ = fs.Symlink("/i", "/j")
			_ = fs.Rename("/absent", "/k")
			r, _ := fs.OpenFile("/h", lease.O_RDONLY, 0)
			buf := make([]byte, 8)
			_, _ = r.Read(buf)
			_, _ = r.Read(buf)
			_, _ = r.(interface {
				ReadAt([]byte, int64) (int, error)
			}).ReadAt(buf, 0)
			_ = r.Close()
		})
		return err
	}
	r := Run(Config{Seed: 1, StepsMax: 5000, Faults: &FaultPlan{}, Trace: &trace, Setup: setup})
	if r.Outcome != OutcomeOK {
		t.Fatalf("run: %v %s", r.Outcome, r.Message)
	}
	var ops []string
	for _, line := range strings.Split(trace.String(), "\n") {
		if _, op, ok := strings.Cut(line, " proc=a op="); ok && !strings.HasPrefix(op, "start") &&
			!strings.HasPrefix(op, "openfile") && !strings.HasPrefix(op, "write") && !strings.HasPrefix(op, "close") {
			ops = append(ops, "op="+op)
		}
	}
	want := []string{
		"op=rename path=/f to=/g result=ok",
		"op=renamenoreplace path=/g to=/h result=ok",
		"op=link path=/h to=/i result=ok",
		"op=symlink path=/j target=/i result=ok",
		"op=rename path=/absent to=/k result=no such file or directory",
		"op=read path=/h result=ok",
		"op=read path=/h result=EOF",
		"op=pread path=/h result=EOF",
	}
	if strings.Join(ops, "\n") != strings.Join(want, "\n") {
		t.Fatalf("trace ops:\n%s\nwant:\n%s\nfull trace:\n%s", strings.Join(ops, "\n"), strings.Join(want, "\n"), trace.String())
	}
}
