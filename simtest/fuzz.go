package simtest

import (
	"encoding/binary"
	"testing"

	"github.com/leasekit/leasekit/campaign"
)

// Fuzz serves `go test -fuzz`: the fuzzer's input bytes are a run. The
// first 8 bytes (little endian) pick the seed, whose swarm fault plan and
// scheduler the run takes (as a campaign's run of that seed would); every
// further byte is one answer of the run's decision stream, replayed as
// campaign and sim replay a shrunk decision list (answers past its end are
// 0, the most boring choice). A failing input is shrunk and written as a
// seed file under testdata/<engine>/, and the test fails with its replay
// command; go test also keeps the input in testdata/fuzz/ as usual.
func Fuzz(f *testing.F, engine *campaign.Engine) {
	f.Helper()
	catalog := campaign.NewCatalog(engine)
	if *flagReplay != "" {
		replayOne(f, catalog, *flagReplay)
		return
	}
	o := Options{}.resolve()
	options, err := o.campaign(catalog, engine, func(string, ...any) {})
	if err != nil {
		f.Fatal(err)
	}
	for seed := range uint64(fuzzCorpusSeeds) {
		f.Add(corpusEntry(catalog, options, engine.Name, seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, err := SpecOf(options, engine.Name, data)
		if err != nil {
			t.Fatal(err)
		}
		_, finding, _, err := catalog.Execute(spec, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		if finding.OK() {
			return
		}
		path, shrunk, err := catalog.ShrinkToFile(spec, finding, o.SeedDir, campaign.ShrinkOptions{RunsMax: o.ShrinkRuns}, replayCommand(t))
		if err != nil {
			t.Fatalf("simtest: %s: %v (%s); shrinking: %v", engine.Name, finding, firstLine(finding.Message), err)
		}
		t.Fatalf("simtest: %s found %v (shrunk to %d choices): %s; replay: %s", engine.Name, shrunk.Finding,
			shrunk.ChoicesAfter, firstLine(shrunk.Finding.Message), replayCommand(t)(path))
	})
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
