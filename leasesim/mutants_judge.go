package leasesim

import (
	"fmt"
	"time"

	"github.com/leasekit/leasekit/campaign"
)

// EngineFinding is a detection of a mutant's hunt that the unmutated build
// fails as well: it says nothing about the planted bug and is a finding in
// the engine (or the harness) to rerun on the real build.
type EngineFinding struct {
	Engine  string `json:"engine"`
	Class   string `json:"class"`
	Message string `json:"message"`
	// Shrunk is true when the unshrunk detection passed on the unmutated
	// build but its shrink drifted to a failure the unmutated build has.
	Shrunk bool `json:"shrunk"`
	// Seed is the failing input as seed-file text: save it as a .seed file
	// and `leasesim replay` it on the real build.
	Seed string `json:"seed"`
}

// huntPastEngineFindings runs hunt (the mutant build's search of
// row.Engine), replays
// each detection, unshrunk and shrunk, on the unmutated build (this
// process), and hunts on past the seed of a detection the unmutated build
// shares, up to confoundedMax times within flags' budgets. row.Hunt is the
// last hunt with the budgets spent so far; it is found only when neither
// the detection nor its shrunk seed fails on the unmutated build.
func (c *Command) huntPastEngineFindings(row *MutantRow, flags huntFlags, hunt func(huntFlags) (campaign.HuntResult, error)) {
	base, seeds, seconds, runs := flags.baseSeed, 0, 0.0, 0
	for attempt := 0; attempt <= confoundedMax; attempt++ {
		next := flags
		next.baseSeed = base
		next.seedsMax = flags.seedsMax - seeds
		next.duration = flags.duration - time.Duration(seconds*float64(time.Second))
		if next.seedsMax <= 0 || (flags.duration > 0 && next.duration <= 0) {
			return
		}
		result, err := hunt(next)
		if err != nil {
			row.Error = err.Error()
			return
		}
		seeds, seconds, runs = seeds+result.Seeds, seconds+result.Seconds, runs+result.Runs
		result.Seeds, result.Seconds, result.Runs = seeds, seconds, runs
		row.Hunt = result
		if !result.Found {
			return
		}
		shared, err := c.engineFindings(result, row.Engine, row.Faults)
		if err != nil {
			row.Error = err.Error()
			return
		}
		if len(shared) == 0 {
			return
		}
		row.EngineFindings = append(row.EngineFindings, shared...)
		row.Confounded++
		row.ConfoundedSeeds = append(row.ConfoundedSeeds, result.Seed)
		if result.Input != "" {
			row.ConfoundedInputs = append(row.ConfoundedInputs, result.Input)
		}
		row.Hunt.Found = false
		row.Hunt.Stopped = fmt.Sprintf("gave up after %d detections the real build also fails", row.Confounded)
		if flags.search == "explore" {
			return // an exploration does not depend on the base seed: a rerun finds the same
		}
		base = result.Seed + 1
	}
}

// engineFindings replays a hunt's detection on the unmutated build (this
// process, with the hunt's engines): the detecting input (a finding when it fails there with the
// same class) and the shrunk failure (a finding when it fails there at
// all: a mutant's stored seed must pass on the real code).
func (c *Command) engineFindings(hunt campaign.HuntResult, engines, faults string) ([]EngineFinding, error) {
	setting, err := campaign.ParseFaultSetting(faults)
	if err != nil {
		return nil, err
	}
	names, err := c.Catalog.ResolveEngines(engines)
	if err != nil {
		return nil, err
	}
	options := campaign.Options{Catalog: c.Catalog, Engines: names, Faults: setting}
	finding, err := campaign.RerunHunt(options, hunt)
	if err != nil {
		return nil, fmt.Errorf("replaying the detection on the unmutated build: %w", err)
	}
	if !finding.OK() && finding.Class == hunt.Class {
		seed := hunt.Input
		if seed == "" {
			spec, err := options.SpecFor(hunt.Engine, hunt.Seed)
			if err != nil {
				return nil, err
			}
			file, err := c.Catalog.RecordSeedFile(spec)
			if err != nil {
				return nil, err
			}
			seed = string(file.Format())
		}
		return []EngineFinding{{Engine: hunt.Engine, Class: finding.Class, Message: finding.Message, Seed: seed}}, nil
	}
	if hunt.ShrunkSeed == "" {
		return nil, nil
	}
	file, err := campaign.ParseSeedFile([]byte(hunt.ShrunkSeed))
	if err != nil {
		return nil, fmt.Errorf("the hunt's shrunk seed does not parse: %w", err)
	}
	// The step budget is the engine's setting, not the input: a mutant may
	// plant a smaller one (its shrunk seed records it), and the unmutated
	// build runs with its own. A larger budget replays the same steps up
	// to any violation the shrunk seed reached.
	if unmutated, err := options.SpecFor(file.Spec.Engine, file.Spec.Seed); err == nil {
		file.Spec.StepsMax = max(file.Spec.StepsMax, unmutated.StepsMax)
	}
	_, shrunk, _, err := c.Catalog.Execute(file.Spec, nil, false)
	if err != nil {
		return nil, fmt.Errorf("replaying the shrunk seed on the unmutated build: %w", err)
	}
	if shrunk.OK() {
		return nil, nil
	}
	return []EngineFinding{{Engine: file.Spec.Engine, Class: shrunk.Class, Message: shrunk.Message, Shrunk: true, Seed: hunt.ShrunkSeed}}, nil
}
