package sim

import (
	"fmt"
	"strings"
)

// Fault names, in the order a FaultPlan draws and prints them.
const (
	FaultCrash      = "crash"      // SIGKILL the process about to run
	FaultPowerLoss  = "powerloss"  // power loss + reboot of a host; its FS reduced to a crash state
	FaultPIDChurn   = "pidchurn"   // spawn and reap many processes on a host to force PID reuse
	FaultZombie     = "zombie"     // an exiting process stays a zombie for a while
	FaultUpgrade    = "upgrade"    // replace an executable on a host
	FaultEACCES     = "eacces"     // an inspection fails with EACCES
	FaultFSError    = "fserror"    // an FS call fails with EIO or ENOSPC
	FaultCorrupt    = "corrupt"    // a workload hook corrupts a file from outside
	FaultRenameRace = "renamerace" // a workload hook renames under a process's feet
	FaultClockStep  = "clockstep"  // a host's wall clock steps forward or backward
	FaultProcfs     = "procfs"     // /proc hazards: a hostile comm at spawn, a zombie reaped between two reads
	FaultStop       = "stop"       // SIGSTOP the process about to run, SIGCONT it a long virtual time later
	FaultCotenant   = "cotenant"   // a workload hook: a hostile co-tenant (same uid) plants symlinks, swaps parents, restores old records
)

// faultSpec is one fault's name and the largest per-step probability a swarm
// plan gives it.
type faultSpec struct {
	name           string
	probabilityMax float64
}

// faultSpecs lists every fault, in plan order.
var faultSpecs = []faultSpec{
	{FaultCrash, 0.02},
	{FaultPowerLoss, 0.002},
	{FaultPIDChurn, 0.01},
	{FaultZombie, 0.5},
	{FaultUpgrade, 0.002},
	{FaultEACCES, 0.05},
	{FaultFSError, 0.01},
	{FaultCorrupt, 0.001},
	{FaultRenameRace, 0.01},
	{FaultClockStep, 0.002},
	{FaultProcfs, 0.5},
	{FaultStop, 0.002},
	{FaultCotenant, 0.01},
}

// probabilityLevels is how many probabilities a swarm plan chooses among for
// an enabled fault: probabilityMax / 2^(levels-1-i) for level i, so level 0
// (the boring answer) is the rarest.
const probabilityLevels = 6

// FaultPlan holds the per-step probability of each named fault. A zero plan
// injects nothing.
type FaultPlan struct {
	probabilities [faultCount]float64
}

// faultCount is the number of faults; a constant so the plan is a comparable value.
const faultCount = 13

func init() {
	if len(faultSpecs) != faultCount {
		panic("sim: fault table and plan size disagree")
	}
}

// DrawFaultPlan draws a swarm plan: each fault is enabled or not (0 = off),
// and an enabled fault gets one of probabilityLevels probabilities.
func DrawFaultPlan(d *Decisions) FaultPlan {
	var plan FaultPlan
	for i, spec := range faultSpecs {
		if d.Intn(2) == 0 {
			continue
		}
		level := d.Intn(probabilityLevels)
		plan.probabilities[i] = spec.probabilityMax / float64(uint(1)<<(probabilityLevels-1-level))
	}
	return plan
}

// Set sets the probability of the named fault; it panics on an unknown name.
func (p *FaultPlan) Set(name string, probability float64) {
	if probability < 0 || probability > 1 {
		panic(fmt.Sprintf("sim: fault %s probability %v", name, probability))
	}
	p.probabilities[faultIndex(name)] = probability
}

// Get returns the probability of the named fault.
func (p FaultPlan) Get(name string) float64 { return p.probabilities[faultIndex(name)] }

func faultIndex(name string) int {
	for i, spec := range faultSpecs {
		if spec.name == name {
			return i
		}
	}
	panic(fmt.Sprintf("sim: unknown fault %q", name))
}

// String prints the plan as key=value pairs in plan order, the form a run
// prints when it starts.
func (p FaultPlan) String() string {
	var b strings.Builder
	for i, spec := range faultSpecs {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%.4f", spec.name, p.probabilities[i])
	}
	return b.String()
}

// ParseFaultPlan parses the form String prints.
func ParseFaultPlan(s string) (FaultPlan, error) {
	var plan FaultPlan
	for _, field := range strings.Fields(s) {
		key, value, ok := strings.Cut(field, "=")
		if !ok {
			return FaultPlan{}, fmt.Errorf("sim: fault plan field %q is not key=value", field)
		}
		var probability float64
		if _, err := fmt.Sscan(value, &probability); err != nil || probability < 0 || probability > 1 {
			return FaultPlan{}, fmt.Errorf("sim: fault %s probability %q is not in [0, 1]", key, value)
		}
		index := -1
		for i, spec := range faultSpecs {
			if spec.name == key {
				index = i
			}
		}
		if index < 0 {
			return FaultPlan{}, fmt.Errorf("sim: unknown fault %q", key)
		}
		plan.probabilities[index] = probability
	}
	return plan, nil
}

// Indexes into faultSpecs, for the runtime's per-step draws.
const (
	faultIndexCrash = iota
	faultIndexPowerLoss
	faultIndexPIDChurn
	faultIndexZombie
	faultIndexUpgrade
	faultIndexEACCES
	faultIndexFSError
	faultIndexCorrupt
	faultIndexRenameRace
	faultIndexClockStep
	faultIndexProcfs
	faultIndexStop
	faultIndexCotenant
)

func init() {
	for name, index := range map[string]int{
		FaultCrash: faultIndexCrash, FaultPowerLoss: faultIndexPowerLoss, FaultPIDChurn: faultIndexPIDChurn,
		FaultZombie: faultIndexZombie, FaultUpgrade: faultIndexUpgrade, FaultEACCES: faultIndexEACCES,
		FaultFSError: faultIndexFSError, FaultCorrupt: faultIndexCorrupt, FaultRenameRace: faultIndexRenameRace,
		FaultClockStep: faultIndexClockStep, FaultProcfs: faultIndexProcfs, FaultStop: faultIndexStop,
		FaultCotenant: faultIndexCotenant,
	} {
		if faultSpecs[index].name != name {
			panic("sim: fault index of " + name + " is wrong")
		}
	}
}

// AllFaultsPlan is the fault plan of the engines' campaigns with every
// fault enabled: each fault's probability is drawn per seed among the swarm
// levels (never off), from decisions independent of the run's.
func AllFaultsPlan(seed uint64) FaultPlan {
	d := NewDecisions(seed ^ 0x6c65617365706c61) // "leasepla"
	var plan FaultPlan
	for i, spec := range faultSpecs {
		level := d.Intn(probabilityLevels)
		plan.probabilities[i] = spec.probabilityMax / float64(uint(1)<<(probabilityLevels-1-level))
	}
	return plan
}

// StopFaults turns every fault off for the rest of the run (a workload's
// liveness phase: "once faults stop").
func (w *World) StopFaults() { w.plan, w.drawnGlobals = FaultPlan{}, nil }
