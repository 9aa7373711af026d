package leasework

// An operator at a second terminal beside the simulated `leasereal run`
// wrappers, in one run in cliOperatorOneIn with CLI terminals: now and
// then it types `leasereal reclaim --dir D` (the dry run), reads it, and
// reruns it with `--force --generation G` for each record whose owner the
// evidence shows gone, as the dry run tells it to. Both invocations run
// reclaim's own logic (leasecli.Reclaim). A forced record of a killed run
// goes into quarantine/ while that run's command tree may still work; the
// next run must still hold the lease without starting its command until
// the tree is gone (leasecli.AcquiredTreeRuns judges quarantine/). The
// wrappers' ground truth (clirun.go) judges it: no run starts its command
// while another run's tree still works.
//
// The draw comes from a decision stream of its own, so a run without the
// operator draws, schedules and hashes as it did before the operator
// existed.

import (
	"context"
	"time"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/leasecli"
	"github.com/leasekit/leasekit/sim"
)

const (
	// cliOperatorOneIn: one run in cliOperatorOneIn with CLI terminals has
	// the operator.
	cliOperatorOneIn = 3
	// cliOperatorRounds bounds its reclaims; each follows a pause of 2 to
	// 40 ms.
	cliOperatorRounds = 6
)

// cliOperatorProbes are the declared probes of the CLI operator.
var cliOperatorProbes = []string{"lease-cli-operator-dry-run", "lease-cli-operator-reclaimed"}

// startOperator spawns the operator in the runs that draw it.
func (c *cliRuns) startOperator() error {
	if c.lw.opts.CLIOperator < 0 || c.lw.world.Decisions().Stream("cli-operator").Intn(cliOperatorOneIn) != 0 {
		return nil
	}
	p, err := c.lw.world.Spawn(c.host, sim.ProcSpec{Name: "cli-operator", UID: leaseUID, Exe: cliExe}, c.operate)
	c.operator = p
	return err
}

// operate is the operator's terminal: its rounds of reclaim.
func (c *cliRuns) operate(p *sim.Proc) {
	d := c.lw.world.Decisions().Stream("cli-operator")
	for range cliOperatorRounds {
		c.sleep(p, time.Duration(2+d.Intn(39))*time.Millisecond)
		m, env, ok := c.manager(p)
		if !ok {
			return
		}
		c.reclaimTyped(m, env)
	}
}

// reclaimTyped is one `reclaim` dry run and, when it lists records whose
// owner the operator's own look shows gone, the forced rerun that
// confirms their generations.
func (c *cliRuns) reclaimTyped(m *lease.Manager, env leasecli.Env) {
	ctx := context.Background()
	projection, err := m.Inspect(ctx)
	if err != nil {
		return
	}
	dry, err := leasecli.Reclaim(ctx, m, projection, leasecli.ReclaimOptions{})
	if err != nil || dry.Result != leasecli.ReclaimDryRun {
		return
	}
	c.lw.world.Probe("lease-cli-operator-dry-run")
	confirmed := map[string]bool{}
	for _, target := range dry.Targets {
		if target.Kind == lease.BlockerReceiver && target.Generation != "" && projection.Kind == lease.Owned &&
			lease.ClassifyRecord(projection.Owner.Identity(), env.Self, env.Inspector).Kind == lease.OwnerStale {
			confirmed[target.Generation] = true
		}
	}
	if len(confirmed) == 0 {
		return
	}
	projection, err = m.Inspect(ctx)
	if err != nil {
		return
	}
	forced, err := leasecli.Reclaim(ctx, m, projection, leasecli.ReclaimOptions{Force: true, Confirmed: confirmed})
	if err == nil && forced.Result == leasecli.Reclaimed {
		c.lw.world.Probe("lease-cli-operator-reclaimed")
	}
}
