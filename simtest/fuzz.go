package simtest

import (
	"encoding/binary"
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/leasekit/leasekit/campaign"
)

// Fuzz serves `go test -fuzz`: the fuzzer's input bytes are a run. The
// first 8 bytes (little endian) pick the seed, whose swarm fault plan and
// scheduler the run takes (as a campaign's run of that seed would); every
// further byte is one answer of the run's decision stream, replayed as
// campaign and sim replay a shrunk decision list (answers past its end are
// 0, the most boring choice). It is FuzzWith with the zero Options.
func Fuzz(f *testing.F, engine *campaign.Engine) {
	f.Helper()
	FuzzWith(f, engine, Options{})
}

// FuzzWith is Fuzz with options: o.Faults, o.Params and o.BaseSeed shape
// the runs (as a campaign's), o.SeedDir is where a failing input's seed
// file goes, o.ShrinkRuns bounds its shrink, o.ReplayCommand names the
// command printed for it.
//
// A failing input is handled in two places, because the fuzzer runs the
// function many times while it minimizes a crasher. While fuzzing (in a
// fuzz worker process) the test only fails, naming the finding, and go
// test writes the input to testdata/fuzz/FuzzX/<hash>. Rerunning that
// input (go test -run=FuzzX/<hash>, the command go test prints) runs the
// function outside the fuzzer: there the failing run is shrunk, written
// as a seed file under <SeedDir>/<engine>/, and the test fails with the
// command that replays the seed file. The seed file is an ordinary one
// (leasesim replay, simtest's replay and the seed-file regression tests
// read it), so the crasher becomes a regression seed that fails until the
// bug is fixed.
func FuzzWith(f *testing.F, engine *campaign.Engine, o Options) {
	f.Helper()
	catalog := campaign.NewCatalog(engine)
	o = o.resolve()
	if *flagReplay != "" {
		replayOne(f, catalog, *flagReplay, &htmlPages{path: o.HTML, catalog: catalog})
		return
	}
	options, err := o.campaign(catalog, engine, func(string, ...any) {})
	if err != nil {
		f.Fatal(err)
	}
	for i := range uint64(fuzzCorpusSeeds) {
		f.Add(corpusEntry(catalog, options, engine.Name, o.BaseSeed+i))
	}
	command := o.replayCommand(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		target, _, _ := strings.Cut(t.Name(), "/")
		if err := fuzzInput(catalog, options, o, target, data, !inFuzzWorker(), command); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzFailure is a fuzz input's failing run.
type FuzzFailure struct {
	// Finding is the input's own finding, before shrinking.
	Finding campaign.Finding
	// SeedFile is the shrunk seed file's path ("" when not stored).
	SeedFile string
	// Shrunk is the shrink's result (zero when not stored).
	Shrunk campaign.ShrinkResult
	// Replay is the command replaying SeedFile ("" when not stored).
	Replay string
	// HTML is the absolute path of the seed file's page (Options.HTML),
	// "" when none was written.
	HTML string
	// engine and target (the fuzz target's name) name the failure.
	engine, target string
}

func (e *FuzzFailure) Error() string {
	if e.SeedFile == "" {
		return fmt.Sprintf("simtest: %s found %v: %s; rerun the input without -fuzz (go test -run=%s/<input>, "+
			"<input> being the name go test gives it: seed#N, or the file name under testdata/fuzz/%s/) "+
			"to shrink it into a seed file", e.engine, e.Finding, firstLine(e.Finding.Message), e.target, e.target)
	}
	return fmt.Sprintf("simtest: %s found %v (shrunk to %d choices, seed file %s): %s; replay: %s%s", e.engine,
		e.Shrunk.Finding, e.Shrunk.ChoicesAfter, e.SeedFile, firstLine(e.Shrunk.Finding.Message), e.Replay, htmlNote(e.HTML))
}

// fuzzInput runs one fuzz input. A failing run is an error, a
// *FuzzFailure; with store, the run is first shrunk and written as a seed
// file under o.SeedDir, and its page written to o.HTML if asked.
func fuzzInput(catalog *campaign.Catalog, options campaign.Options, o Options, target string, data []byte, store bool,
	command campaign.ReplayCommand) error {
	engine := options.Engines[0]
	spec, err := SpecOf(options, engine, data)
	if err != nil {
		return err
	}
	_, finding, _, err := catalog.Execute(spec, nil, false)
	if err != nil {
		return err
	}
	if finding.OK() {
		return nil
	}
	failure := &FuzzFailure{Finding: finding, engine: engine, target: target}
	if !store {
		return failure
	}
	path, shrunk, err := catalog.ShrinkToFile(spec, finding, o.SeedDir, campaign.ShrinkOptions{RunsMax: o.ShrinkRuns}, command)
	if err != nil {
		return fmt.Errorf("simtest: %s: %v (%s); shrinking: %v", engine, finding, firstLine(finding.Message), err)
	}
	failure.SeedFile, failure.Shrunk, failure.Replay = path, shrunk, command(path)
	file, err := campaign.ReadSeedFile(path)
	if err != nil {
		return err
	}
	if failure.HTML, err = (&htmlPages{path: o.HTML, catalog: catalog}).write(file.Spec); err != nil {
		return err
	}
	return failure
}

// inFuzzWorker reports whether this process is one of go test -fuzz's
// workers, which run the fuzz function on generated and minimized inputs
// (the coordinator writes the crasher; the worker must not write files for
// each step of the minimization).
func inFuzzWorker() bool {
	worker := flag.Lookup("test.fuzzworker")
	return worker != nil && worker.Value.String() == "true"
}

// fuzzCorpusSeeds is how many campaign seeds' runs seed the fuzz corpus.
const fuzzCorpusSeeds = 8

// corpusEntry is the fuzz input of a campaign seed's run: the seed, then
// the decisions the run drew (each clamped to a byte), so the fuzzer starts
// from realistic schedules instead of the all-boring one.
func corpusEntry(catalog *campaign.Catalog, options campaign.Options, engine string, seed uint64) []byte {
	data := binary.LittleEndian.AppendUint64(nil, seed)
	spec, err := options.SpecFor(engine, seed)
	if err != nil {
		panic(err) // validated by the caller's options
	}
	result, _, _, err := catalog.Execute(spec, nil, false)
	if err != nil {
		panic(err)
	}
	for _, d := range result.Decisions {
		data = append(data, byte(min(d, 255)))
	}
	return data
}

// SpecOf is the run a fuzz input stands for: the seed from its first 8
// bytes, then one decision per byte.
func SpecOf(options campaign.Options, engine string, data []byte) (campaign.Spec, error) {
	var seed uint64
	if len(data) >= 8 {
		seed, data = binary.LittleEndian.Uint64(data), data[8:]
	}
	spec, err := options.SpecFor(engine, seed)
	if err != nil {
		return campaign.Spec{}, err
	}
	spec.Decisions = make([]uint32, len(data))
	for i, b := range data {
		spec.Decisions[i] = uint32(b)
	}
	return spec, nil
}
