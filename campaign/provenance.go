package campaign

import (
	"fmt"
	"os/exec"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/leasekit/leasekit/sim"
)

// Provenance says where a seed file's run came from and what it did when the
// file was written, so a replay on later code can tell whether the run is
// still the same one (Drift) and, when not, since which commit it moved.
type Provenance struct {
	// Commit is the source revision the run was recorded at ("" when
	// unknown); "+dirty" is appended for a modified work tree.
	Commit string
	// Go is the Go version of the recording binary.
	Go string
	// Workload is the engine's WorkloadVersion when the file was written.
	Workload int
	// Steps and Hash are the recorded run's step count and final hash.
	Steps int
	Hash  uint64
	// Probes are the names of the probes the recorded run hit, sorted.
	Probes []string
}

// newProvenance records the provenance of a run of engine e.
func newProvenance(e *Engine, result sim.Result) *Provenance {
	return &Provenance{Commit: BuildCommit(), Go: runtime.Version(), Workload: e.WorkloadVersion,
		Steps: result.Steps, Hash: result.Hash, Probes: probeNames(result)}
}

func probeNames(result sim.Result) []string {
	names := make([]string, 0, len(result.Probes))
	for name, count := range result.Probes {
		if count > 0 {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

var buildCommit = sync.OnceValue(func() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		revision, modified := "", false
		for _, setting := range info.Settings {
			switch setting.Key {
			case "vcs.revision":
				revision = setting.Value
			case "vcs.modified":
				modified = setting.Value == "true"
			}
		}
		if revision != "" {
			if modified {
				revision += "+dirty"
			}
			return revision
		}
	}
	// go test binaries and -buildvcs=false builds carry no revision: ask
	// git, when run from a checkout (cheap, once per process).
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	revision := strings.TrimSpace(string(out))
	if status, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(status) > 0 {
		revision += "+dirty"
	}
	return revision
})

// BuildCommit returns the source revision of the running code, "" when it
// cannot be known: the binary's vcs.revision, else `git rev-parse HEAD`.
func BuildCommit() string { return buildCommit() }

// Drift compares a seed file's recorded run with its replay on today's code.
type Drift struct {
	// Known is false for a file without provenance (version 1): drift
	// cannot be told.
	Known bool
	// Drifted is true when the replay is not the recorded run: another
	// step count or final hash.
	Drifted bool
	// StepsRecorded, StepsNow, HashRecorded and HashNow are the two runs'.
	StepsRecorded, StepsNow int
	HashRecorded, HashNow   uint64
	// ProbesLost are recorded probes the replay no longer hits.
	ProbesLost []string
	// FindingNow is what the replay finds.
	FindingNow Finding
	// FromSummary is true when the recorded steps, hash and probes come from
	// a version 1 file's "# outcome=..." and "# probes:" summary lines.
	FromSummary bool
	// Since is the recorded commit ("" when unknown), WorkloadRecorded and
	// WorkloadNow the two workload versions.
	Since                         string
	WorkloadRecorded, WorkloadNow int
}

// DriftOf compares file's provenance with a replay of its spec.
func DriftOf(file SeedFile, e *Engine, replay sim.Result, finding Finding) Drift {
	d := Drift{StepsNow: replay.Steps, HashNow: replay.Hash, FindingNow: finding, WorkloadNow: e.WorkloadVersion}
	p := file.Provenance
	if p == nil {
		p = summaryProvenance(file.Summary)
		d.FromSummary = p != nil
	}
	if p == nil {
		return d
	}
	d.Known = true
	d.StepsRecorded, d.HashRecorded, d.Since, d.WorkloadRecorded = p.Steps, p.Hash, p.Commit, p.Workload
	d.Drifted = p.Steps != replay.Steps || p.Hash != replay.Hash
	now := probeNames(replay)
	for _, name := range p.Probes {
		if !slices.Contains(now, name) {
			d.ProbesLost = append(d.ProbesLost, name)
		}
	}
	return d
}

// String is the one-paragraph drift report replay and explain print.
func (d Drift) String() string {
	if !d.Known {
		return fmt.Sprintf("drift unknown: the seed file records no provenance (a version 1 file); replayed %d steps, finds %v",
			d.StepsNow, d.FindingNow)
	}
	if !d.Drifted {
		return fmt.Sprintf("no drift: replayed all %d recorded steps to the recorded final hash %016x", d.StepsRecorded, d.HashRecorded)
	}
	since := d.Since
	if since == "" {
		since = "an unknown commit"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "DRIFT: replayed %d of %d recorded steps", min(d.StepsNow, d.StepsRecorded), d.StepsRecorded)
	if d.StepsNow > d.StepsRecorded {
		fmt.Fprintf(&b, " (and %d more)", d.StepsNow-d.StepsRecorded)
	}
	if d.HashNow != d.HashRecorded {
		fmt.Fprintf(&b, "; final hash differs (%016x, recorded %016x)", d.HashNow, d.HashRecorded)
	}
	fmt.Fprintf(&b, ": the code under this seed changed since %s", since)
	if d.FromSummary {
		b.WriteString(" (a version 1 file: recorded steps and hash read from its summary lines)")
	}
	if d.WorkloadNow != d.WorkloadRecorded && !d.FromSummary {
		fmt.Fprintf(&b, " (workload version %d, recorded %d)", d.WorkloadNow, d.WorkloadRecorded)
	}
	if len(d.ProbesLost) > 0 {
		fmt.Fprintf(&b, "; probes no longer hit: %s", strings.Join(d.ProbesLost, " "))
	}
	fmt.Fprintf(&b, "; finds %v now", d.FindingNow)
	return b.String()
}

// CheckDrift replays file's spec once and compares it with the recorded run.
func (c *Catalog) CheckDrift(file SeedFile) (Drift, error) {
	e, err := c.Lookup(file.Spec.Engine)
	if err != nil {
		return Drift{}, err
	}
	result, finding, _, err := c.Execute(file.Spec, nil, false)
	if err != nil {
		return Drift{}, err
	}
	return DriftOf(file, e, result, finding), nil
}

// ReseedCommand is the command that re-derives a drifted seed file.
func ReseedCommand(path string) string { return "go run ./cmd/leasesim reseed " + path }

// summaryProbe is one "name=count" of a summary's probes line (a probe name
// may hold spaces).
var summaryProbe = regexp.MustCompile(`(?:^| )([^=]+?)=\d+`)

// summaryProvenance recovers the recorded steps, hash and (the first dozen)
// probes of a version 1 file from the summary lines its writer added, so its
// drift is reported too; nil when the lines are not there.
func summaryProvenance(summary []string) *Provenance {
	var p *Provenance
	for _, line := range summary {
		if strings.HasPrefix(line, "outcome=") {
			steps, errSteps := strconv.Atoi(field(line, "steps"))
			hash, errHash := strconv.ParseUint(field(line, "hash"), 16, 64)
			if errSteps != nil || errHash != nil {
				return nil
			}
			p = &Provenance{Steps: steps, Hash: hash}
		}
	}
	if p == nil {
		return nil
	}
	for _, line := range summary {
		if probes, ok := strings.CutPrefix(line, "probes: "); ok {
			probes, _, _ = strings.Cut(probes, " ...")
			for _, match := range summaryProbe.FindAllStringSubmatch(probes, -1) {
				p.Probes = append(p.Probes, match[1])
			}
		}
	}
	return p
}
