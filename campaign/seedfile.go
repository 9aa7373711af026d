package campaign

import (
	"bufio"
	"bytes"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/leasekit/leasekit/sim"
)

// SeedVersion is the first line of every seed file written now: version 2
// adds the provenance lines (commit, go, workload, steps, hash, probes) and
// the pinned flag. Version 1 files (SeedVersion1, no provenance) are still
// read; their drift cannot be told.
const SeedVersion = "leasekit-seed v2"

// SeedVersion1 is the first line of a seed file without provenance.
const SeedVersion1 = "leasekit-seed v1"

// seedFileBytesMax bounds a seed file read, so a wrong path cannot make the
// parser read a huge file.
const seedFileBytesMax = 64 << 20

// SeedFile is a stored run: its full input (Spec), what it found when it
// was written (Expect), and human summary lines.
//
// Format (see docs/LEASESIM.md):
//
//	leasekit-seed v2
//	engine=lease
//	seed=17
//	scheduler=random
//	pct_depth=3
//	pct_steps=2000
//	steps_max=20000
//	faults=crash=0.0100 powerloss=0.0000 ...
//	param.processes=3
//	found=violation
//	class=invariant one-holder
//	commit=1890a1a...
//	go=go1.26.0
//	workload=1
//	steps=40
//	hash=3e3caca7ab9c838c
//	probes=crash,lease-acquired
//	decisions=0*12,1,0*3,2
//	stream_keys=world,sched,proc/client-0,...
//	streams=0*5,1*2,2,...
//	# outcome=violation steps=40 ...
//
// stream_keys and streams (each decision's stream, an index into
// stream_keys) are present when the run recorded its streams (Spec.Keys).
type SeedFile struct {
	Spec Spec
	// Expect is the finding recorded when the file was written.
	Expect Finding
	// Provenance is the recorded run's origin and result; nil for a
	// version 1 file.
	Provenance *Provenance
	// Pinned marks a file kept as an input only (pinned=true): its drift is
	// reported, but go test does not fail on it.
	Pinned bool
	// Summary lines are written after "# " and ignored when parsing.
	Summary []string
}

// Format renders the seed file.
func (f SeedFile) Format() []byte {
	var b bytes.Buffer
	if f.Provenance == nil {
		b.WriteString(SeedVersion1 + "\n")
	} else {
		b.WriteString(SeedVersion + "\n")
	}
	for _, line := range f.Spec.knobLines() {
		b.WriteString(line + "\n")
	}
	fmt.Fprintf(&b, "found=%v\n", f.Expect.Outcome)
	if f.Expect.Class != "" {
		fmt.Fprintf(&b, "class=%s\n", oneLine(f.Expect.Class))
	}
	if f.Pinned {
		b.WriteString("pinned=true\n")
	}
	if p := f.Provenance; p != nil {
		fmt.Fprintf(&b, "commit=%s\ngo=%s\nworkload=%d\nsteps=%d\nhash=%016x\nprobes=%s\n",
			p.Commit, p.Go, p.Workload, p.Steps, p.Hash, strings.Join(p.Probes, ","))
	}
	b.WriteString("decisions=" + sim.FormatDecisions(f.Spec.Decisions) + "\n")
	if f.Spec.Keys != nil {
		b.WriteString("stream_keys=" + strings.Join(f.Spec.Keys, ",") + "\n")
		b.WriteString("streams=" + sim.FormatDecisions(widen(f.Spec.Tags)) + "\n")
	}
	for _, line := range f.Summary {
		for _, part := range strings.Split(line, "\n") {
			b.WriteString("# " + part + "\n")
		}
	}
	return b.Bytes()
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }

// Name returns the file's deterministic name: the finding and a hash of the
// spec, so one failure shrunk twice lands in the same file.
func (f SeedFile) Name() string {
	h := fnv.New64a()
	for _, line := range f.Spec.knobLines() {
		h.Write([]byte(line + "\n"))
	}
	h.Write([]byte(sim.FormatDecisions(f.Spec.Decisions)))
	if f.Spec.Keys != nil {
		h.Write([]byte(strings.Join(f.Spec.Keys, ",") + sim.FormatDecisions(widen(f.Spec.Tags))))
	}
	kind := f.Expect.Outcome.String()
	return fmt.Sprintf("%s-%016x.seed", kind, h.Sum64())
}

// ParseSeedFile parses a seed file's bytes.
func ParseSeedFile(data []byte) (SeedFile, error) {
	var f SeedFile
	scanner := bufio.NewScanner(bytes.NewReader(data))
	scanner.Buffer(make([]byte, 0, 64<<10), seedFileBytesMax)
	line := 0
	seen := map[string]bool{}
	for scanner.Scan() {
		line++
		text := scanner.Text()
		if line == 1 {
			switch text {
			case SeedVersion:
				f.Provenance = &Provenance{}
			case SeedVersion1:
			default:
				return SeedFile{}, fmt.Errorf("line 1: %q is not %q (or %q)", text, SeedVersion, SeedVersion1)
			}
			continue
		}
		if strings.HasPrefix(text, "#") {
			f.Summary = append(f.Summary, strings.TrimPrefix(strings.TrimPrefix(text, "#"), " "))
			continue
		}
		if strings.TrimSpace(text) == "" {
			continue
		}
		key, value, ok := strings.Cut(text, "=")
		if !ok {
			return SeedFile{}, fmt.Errorf("line %d: %q is not key=value", line, text)
		}
		if seen[key] {
			return SeedFile{}, fmt.Errorf("line %d: key %s repeated", line, key)
		}
		seen[key] = true
		if err := f.set(key, value); err != nil {
			return SeedFile{}, fmt.Errorf("line %d: %w", line, err)
		}
	}
	if err := scanner.Err(); err != nil {
		return SeedFile{}, err
	}
	if line == 0 {
		return SeedFile{}, fmt.Errorf("empty seed file")
	}
	if seen["streams"] != seen["stream_keys"] || len(f.Spec.Tags) != len(f.Spec.Decisions) && seen["streams"] {
		return SeedFile{}, fmt.Errorf("streams: want stream_keys and streams, one tag per decision (%d decisions, %d tags)",
			len(f.Spec.Decisions), len(f.Spec.Tags))
	}
	for _, tag := range f.Spec.Tags {
		if int(tag) >= len(f.Spec.Keys) {
			return SeedFile{}, fmt.Errorf("streams: tag %d of %d stream keys", tag, len(f.Spec.Keys))
		}
	}
	required := []string{"engine", "seed", "scheduler", "steps_max", "faults", "found", "decisions"}
	if f.Provenance != nil {
		required = append(required, provenanceKeys...)
	}
	for _, key := range required {
		if !seen[key] {
			return SeedFile{}, fmt.Errorf("missing key %s", key)
		}
	}
	return f, nil
}

// provenanceKeys are the lines a version 2 file must have (and a version 1
// file must not).
var provenanceKeys = []string{"commit", "go", "workload", "steps", "hash", "probes"}

// set applies one key=value line.
func (f *SeedFile) set(key, value string) error {
	var err error
	switch {
	case key == "engine":
		f.Spec.Engine = value
	case key == "seed":
		f.Spec.Seed, err = strconv.ParseUint(value, 10, 64)
	case key == "scheduler":
		f.Spec.Scheduler, err = parseScheduler(value)
	case key == "pct_depth":
		f.Spec.PCTDepth, err = parseCount(value)
	case key == "pct_steps":
		f.Spec.PCTSteps, err = parseCount(value)
	case key == "steps_max":
		f.Spec.StepsMax, err = parseCount(value)
	case key == "faults":
		f.Spec.Faults, err = sim.ParseFaultPlan(value)
	case strings.HasPrefix(key, "param."):
		if f.Spec.Params == nil {
			f.Spec.Params = Params{}
		}
		f.Spec.Params[strings.TrimPrefix(key, "param.")], err = parseCount(value)
	case key == "found":
		f.Expect.Outcome, err = parseOutcome(value)
	case key == "class":
		f.Expect.Class = value
	case key == "decisions":
		f.Spec.Decisions, err = sim.ParseDecisions(value)
	case key == "stream_keys":
		f.Spec.Keys = strings.Split(value, ",")
	case key == "streams":
		f.Spec.Tags, err = narrow(sim.ParseDecisions(value))
	case key == "pinned":
		f.Pinned, err = strconv.ParseBool(value)
	case slices.Contains(provenanceKeys, key):
		err = f.setProvenance(key, value)
	default:
		return fmt.Errorf("unknown key %q", key)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

// widen and narrow convert stream tags for FormatDecisions/ParseDecisions.
func widen(tags []uint16) []uint32 {
	out := make([]uint32, len(tags))
	for i, t := range tags {
		out[i] = uint32(t)
	}
	return out
}

func narrow(list []uint32, err error) ([]uint16, error) {
	if err != nil {
		return nil, err
	}
	out := make([]uint16, len(list))
	for i, v := range list {
		if v > 0xffff {
			return nil, fmt.Errorf("stream tag %d is too large", v)
		}
		out[i] = uint16(v)
	}
	return out, nil
}

// setProvenance applies one provenance line of a version 2 file.
func (f *SeedFile) setProvenance(key, value string) error {
	p := f.Provenance
	if p == nil {
		return fmt.Errorf("a %s line in a version 1 file", key)
	}
	var err error
	switch key {
	case "commit":
		p.Commit = value
	case "go":
		p.Go = value
	case "workload":
		p.Workload, err = parseCount(value)
	case "steps":
		p.Steps, err = parseCount(value)
	case "hash":
		p.Hash, err = strconv.ParseUint(value, 16, 64)
	case "probes":
		p.Probes = []string{}
		if value != "" {
			p.Probes = strings.Split(value, ",")
		}
	}
	return err
}

func parseCount(value string) (int, error) {
	n, err := strconv.Atoi(value)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a count", value)
	}
	return n, nil
}

func parseOutcome(value string) (sim.Outcome, error) {
	for _, o := range []sim.Outcome{sim.OutcomeOK, sim.OutcomeViolation, sim.OutcomeLiveness, sim.OutcomeNondeterminism} {
		if o.String() == value {
			return o, nil
		}
	}
	return 0, fmt.Errorf("unknown outcome %q", value)
}

// ReadSeedFile reads and parses a seed file; errors name the path.
func ReadSeedFile(path string) (SeedFile, error) {
	info, err := os.Stat(path)
	if err != nil {
		return SeedFile{}, err
	}
	if info.Size() > seedFileBytesMax {
		return SeedFile{}, &UsageError{Message: fmt.Sprintf("%s: %d bytes is too large for a seed file", path, info.Size())}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return SeedFile{}, err
	}
	f, err := ParseSeedFile(data)
	if err != nil {
		return SeedFile{}, &UsageError{Message: fmt.Sprintf("%s: %v", path, err)}
	}
	return f, nil
}

// WriteSeedFile writes f atomically as dir/<engine>/<name>.seed and returns
// the path: a temporary file in the same directory, fsynced, renamed over
// the final name, then the directory fsynced, so a crash leaves either no
// file or the whole file.
func WriteSeedFile(dir string, f SeedFile) (string, error) {
	engineDir := filepath.Join(dir, f.Spec.Engine)
	if err := os.MkdirAll(engineDir, 0o755); err != nil {
		return "", err
	}
	final := filepath.Join(engineDir, f.Name())
	return final, writeAtomic(final, f.Format())
}

func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	temp, err := os.CreateTemp(dir, ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(temp.Name()) // after the rename this fails harmlessly
	if _, err := temp.Write(data); err != nil {
		temp.Close()
		return err
	}
	if err := temp.Sync(); err != nil {
		temp.Close()
		return err
	}
	if err := temp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(temp.Name(), 0o644); err != nil {
		return err
	}
	if err := os.Rename(temp.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
