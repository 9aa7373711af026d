package sim

import (
	"testing"
	"time"

	"github.com/leasekit/leasekit/env"
	"github.com/leasekit/leasekit/lease"
)

// A write stamps the file's modification time with the writing host's
// wall clock: two hosts sharing a volume, one stepped an hour ahead, stamp
// an hour apart. A Chtimes sets the time given, and the probes fire.
func TestModTimeIsTheWritingHostsClock(t *testing.T) {
	var alphaWall, betaWall [2]time.Time
	var alphaInfo, betaInfo, touched env.FileInfo
	write := func(p *Proc, name string, wall *[2]time.Time, info *env.FileInfo) {
		wall[0] = p.Host().Wall()
		f, err := p.FS().OpenFile(name, lease.O_WRONLY|lease.O_CREATE, 0o644)
		if err != nil {
			t.Fatalf("open %s: %v", name, err)
		}
		if _, err := f.Write([]byte("x")); err != nil {
			t.Fatalf("write %s: %v", name, err)
		}
		wall[1] = p.Host().Wall()
		if *info, err = f.Stat(); err != nil {
			t.Fatalf("stat %s: %v", name, err)
		}
		f.Close()
	}
	setup := func(w *World) error {
		v := w.AddVolume("shared")
		alpha := w.AddHost(HostSpec{Name: "alpha", Volume: v})
		beta := w.AddHost(HostSpec{Name: "beta", Volume: v})
		beta.wallOffset = int64(time.Hour)
		v.FS().MkdirAll("/l", 0o777, 0)
		if _, err := w.Spawn(alpha, ProcSpec{Name: "a"}, func(p *Proc) { write(p, "/l/a", &alphaWall, &alphaInfo) }); err != nil {
			return err
		}
		_, err := w.Spawn(beta, ProcSpec{Name: "b"}, func(p *Proc) {
			write(p, "/l/b", &betaWall, &betaInfo)
			if err := p.FS().(env.AttrFS).Chtimes("/l/a", time.Time{}, time.Unix(7, 0)); err != nil {
				t.Errorf("chtimes: %v", err)
			}
			var err error
			if touched, err = p.FS().Stat("/l/a"); err != nil {
				t.Errorf("stat: %v", err)
			}
		})
		return err
	}
	r := Run(Config{Seed: 5, StepsMax: 5000, Scheduler: SchedulerRandom, Setup: setup})
	if r.Outcome != OutcomeOK {
		t.Fatalf("run: %v %s", r.Outcome, r.Message)
	}
	within := func(m time.Time, wall [2]time.Time) bool { return !m.Before(wall[0]) && !m.After(wall[1]) }
	if !within(alphaInfo.ModTime(), alphaWall) || !within(betaInfo.ModTime(), betaWall) {
		t.Errorf("mtimes %v, %v; want within the hosts' walls around the writes %v, %v",
			alphaInfo.ModTime(), betaInfo.ModTime(), alphaWall, betaWall)
	}
	if d := betaInfo.ModTime().Sub(alphaInfo.ModTime()); d < 59*time.Minute {
		t.Errorf("beta's stamp is %v after alpha's; want about an hour (its clock)", d)
	}
	if !touched.ModTime().Equal(time.Unix(7, 0)) {
		t.Errorf("after Chtimes: %v", touched.ModTime())
	}
	for _, probe := range []string{ProbeChtimes, ProbeMtimeSteppedClock} {
		if r.Probes[probe] == 0 {
			t.Errorf("probe %s did not fire: %v", probe, r.Probes)
		}
	}
}
