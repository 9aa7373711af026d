package sim

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
)

// Decisions is the only source of randomness of a run: which process runs
// next, which fault fires, how far the clock moves. Every answer is recorded,
// so the recorded list is a complete description of the run's choices (a
// Hypothesis-style choice sequence); a run can replay such a list instead of
// a seed, which is what shrinking cuts. Answers past the end of a replayed list
// are 0, and 0 always means the most boring choice: the first runnable
// process, no fault, the smallest step.
//
// A run's source is split into streams keyed by site (Stream): the
// scheduler, each process's own code, each process's steps and FS faults,
// each global fault. Each stream is seeded from the run's seed and its key,
// so an extra draw at one site (an extra FS call in one process) moves only
// that stream's later answers. The recorded list stays one list in draw
// order, with each answer's stream (Tags, Keys), so shrinking still cuts
// one list, and a replay hands each stream its own answers back.
type Decisions struct {
	// source is the stream's generator, nil when replaying. Intn and
	// Chance draw from it directly (intN, chanceOf), with the values
	// rand.Rand's IntN and Float64 would give, without a rand.Rand's
	// interface call per draw.
	source *rand.PCG
	// pcg is the generator source points to when seeded: one allocation
	// for a stream, not two (a run makes four streams per process).
	pcg      rand.PCG
	replay   []uint32
	position int
	// tail, when not nil, answers past the end of replay (drawAfterReplay).
	tail *Decisions
	// id is the stream's index in log.keys.
	id  uint16
	log *decisionLog
}

// decisionLog is what a run's streams share: the recorded list and, when
// keyed, each answer's stream.
type decisionLog struct {
	recorded []uint32
	tags     []uint16
	keys     []string
	streams  map[string]*Decisions
	// single: one stream for every key (a legacy list without stream tags,
	// and the side sources of NewDecisions).
	single bool
	root   *Decisions
	seed   uint64
	// replaying: streams answer from replays[key] (then tail when thenDraw).
	replaying bool
	thenDraw  bool
	replays   map[string][]uint32
	// shortSteps: IntnOrLong answers as Intn (Config.ReplayShortSteps).
	shortSteps bool
}

// NewDecisions returns a source seeded with seed, one stream for every key.
func NewDecisions(seed uint64) *Decisions {
	d := seededDecisions(seed, seed^0x9e3779b97f4a7c15)
	d.log = &decisionLog{recorded: make([]uint32, 0, 64), single: true, root: d}
	return d
}

// newRunDecisions is a run's keyed source, recording into a recycled list
// sized for a whole run; it returns the "world" stream.
func newRunDecisions(seed uint64) *Decisions {
	log := &decisionLog{recorded: takeDecisionList(), tags: (*tagLists.Get().(*[]uint16))[:0],
		streams: make(map[string]*Decisions, streamsCapInitial), seed: seed}
	log.root = log.stream(streamWorld)
	return log.root
}

// streamsCapInitial sizes a run's stream map: a default run of the
// engines keys 46 to 82 streams on average (four per process), and growing
// the map there rehashed it four times per run.
const streamsCapInitial = 128

// streamWorld is the key of the draws no site claims.
const streamWorld = "world"

func seededDecisions(seed, stream uint64) *Decisions {
	d := &Decisions{}
	d.pcg.Seed(seed, stream)
	d.source = &d.pcg
	return d
}

// Stream returns the stream of key (the same one for the same key). In a
// single-stream source it is the source itself.
func (d *Decisions) Stream(key string) *Decisions {
	if d.log.single {
		return d.log.root
	}
	if s, ok := d.log.streams[key]; ok {
		return s
	}
	return d.log.stream(key)
}

func (l *decisionLog) stream(key string) *Decisions {
	if strings.ContainsAny(key, ", ") || len(l.keys) >= 1<<16-1 {
		panic(fmt.Sprintf("sim: decision stream key %q (with %d streams)", key, len(l.keys)))
	}
	var s *Decisions
	seedOf := func() *Decisions { return seededDecisions(l.seed, streamSalt(key)) }
	if l.replaying {
		s = &Decisions{replay: l.replays[key]}
		if l.thenDraw {
			s.tail = seedOf()
		}
	} else {
		s = seedOf()
	}
	s.id, s.log = uint16(len(l.keys)), l
	l.keys = append(l.keys, key)
	l.streams[key] = s
	return s
}

// streamSalt derives a stream's PCG sequence from its key (FNV-1a).
func streamSalt(key string) uint64 {
	h := uint64(0xcbf29ce484222325)
	for i := 0; i < len(key); i++ {
		h ^= uint64(key[i])
		h *= 0x100000001b3
	}
	return h
}

// decisionLists recycles recorded lists between runs (see Recycle): a list
// is 64 KiB, and a campaign worker runs thousands of seeds.
var decisionLists = sync.Pool{New: func() any {
	list := make([]uint32, 0, decisionsCapInitial)
	return &list
}}

func takeDecisionList() []uint32 {
	return (*decisionLists.Get().(*[]uint32))[:0]
}

// Recycle hands a finished run's decision list back for later runs to
// record into, and clears result.Decisions: call it only when nothing
// holds the list any more (a campaign that keeps only the verdict).
func Recycle(result *Result) {
	if cap(result.Decisions) >= decisionsCapInitial {
		list := result.Decisions[:0]
		decisionLists.Put(&list)
	}
	if cap(result.DecisionTags) >= decisionsCapInitial {
		tags := result.DecisionTags[:0]
		tagLists.Put(&tags)
	}
	result.Decisions, result.DecisionTags = nil, nil
}

// tagLists recycles the recorded lists' stream tags, as decisionLists.
var tagLists = sync.Pool{New: func() any {
	tags := make([]uint16, 0, decisionsCapInitial)
	return &tags
}}

// decisionsCapInitial is the recorded list's first capacity: a default lease
// run draws about five answers per step over about two thousand steps, and
// growing from a small list copied each answer several times.
const decisionsCapInitial = 16384

// ReplayDecisions returns a single-stream source that answers from list,
// then 0: a list recorded without stream tags (a version 1 seed file, an
// exhaustive enumeration).
func ReplayDecisions(list []uint32) *Decisions {
	d := &Decisions{replay: list}
	d.log = &decisionLog{recorded: make([]uint32, 0, len(list)), single: true, root: d}
	return d
}

// ReplayKeyedDecisions returns a keyed source whose stream keys[tags[i]]
// answers list[i], in order, then 0 (or draws from seed, with thenDraw).
func ReplayKeyedDecisions(list []uint32, tags []uint16, keys []string, seed uint64, thenDraw bool) (*Decisions, error) {
	if len(tags) != len(list) {
		return nil, fmt.Errorf("sim: %d decisions but %d stream tags", len(list), len(tags))
	}
	log := &decisionLog{recorded: make([]uint32, 0, len(list)), tags: make([]uint16, 0, len(list)),
		streams: map[string]*Decisions{}, seed: seed, replaying: true, thenDraw: thenDraw, replays: map[string][]uint32{}}
	for i, tag := range tags {
		if int(tag) >= len(keys) {
			return nil, fmt.Errorf("sim: decision %d has stream %d of %d", i, tag, len(keys))
		}
		log.replays[keys[tag]] = append(log.replays[keys[tag]], list[i])
	}
	log.root = log.stream(streamWorld)
	return log.root, nil
}

// drawAfterReplay makes a replaying source draw from seed once its list is
// used up (Config.ReplayThenDraw).
func (d *Decisions) drawAfterReplay(seed uint64) {
	d.tail = seededDecisions(seed, seed^0x9e3779b97f4a7c15)
}

// Intn returns a choice in [0, n). n must be positive; n == 1 draws nothing.
func (d *Decisions) Intn(n int) int {
	if n <= 0 {
		panic(fmt.Sprintf("sim: Intn(%d)", n))
	}
	if n == 1 {
		return 0
	}
	var v uint32
	switch {
	case d.source != nil:
		v = uint32(intN(d.source, uint64(n)))
	case d.tail != nil && d.position >= len(d.replay):
		d.position++
		v = uint32(intN(d.tail.source, uint64(n)))
	default:
		v = d.next() % uint32(n)
	}
	d.record(v)
	return int(v)
}

// IntnOrLong is Intn(n) for a drawing source. A replayed answer v in
// [n, long) is returned as it is rather than modulo n: drawing never makes
// one, so no drawn run changes, but a shrinker can put the sum of many
// answers into one (a step's clock: a failure that needs a guard to grow
// old needs milliseconds of virtual time, which Intn(n) answers could only
// give as hundreds of choices).
func (d *Decisions) IntnOrLong(n, long int) int {
	if n < 2 || long <= n {
		panic(fmt.Sprintf("sim: IntnOrLong(%d, %d)", n, long))
	}
	if d.source != nil || d.log.shortSteps || (d.tail != nil && d.position >= len(d.replay)) {
		return d.Intn(n)
	}
	v := d.next()
	if v >= uint32(long) {
		v %= uint32(n) // as Intn answers it
	}
	d.record(v)
	return int(v)
}

// Chance draws one yes/no decision that is yes with probability p; the
// recorded answer is 1 for yes, 0 for no. p <= 0 draws nothing and says no,
// so disabled faults cost nothing and leave no trace in the list.
func (d *Decisions) Chance(p float64) bool {
	if p <= 0 {
		return false
	}
	if d.source == nil {
		return d.chanceReplayed(p)
	}
	// The drawing stream's path, every step's several draws: kept short
	// enough to inline.
	v := chanceAnswer(d.source.Uint64(), p)
	d.record(v)
	return v != 0
}

// firstChance draws Chance(fault.probability) for each of faults (every
// probability above 0) whose index is first or more, in order, until one
// says yes, and returns its index: a step's global fault draws, with the
// drawing stream's loop kept in one function (the same draws, recorded in
// the same order, as a Chance per fault).
func (d *Decisions) firstChance(faults []drawnGlobal, first int) (int, bool) {
	if d.source == nil {
		for _, fault := range faults {
			if fault.index >= first && d.chanceReplayed(fault.probability) {
				return fault.index, true
			}
		}
		return 0, false
	}
	l := d.log
	for _, fault := range faults {
		if fault.index < first {
			continue
		}
		v := chanceAnswer(d.source.Uint64(), fault.probability)
		l.recorded = append(l.recorded, v)
		if !l.single {
			l.tags = append(l.tags, d.id)
		}
		if v != 0 {
			return fault.index, true
		}
	}
	return 0, false
}

// chanceReplayed is Chance for a replaying stream.
func (d *Decisions) chanceReplayed(p float64) bool {
	var v uint32
	switch {
	case d.tail != nil && d.position >= len(d.replay):
		d.position++
		v = chanceOf(d.tail.source, p)
	case d.next() != 0:
		v = 1
	}
	d.record(v)
	return v != 0
}

// intN is rand.New(source).IntN(n) for n > 1, drawn from source itself:
// Lemire's multiply-shift with rejection, as math/rand/v2's uint64n (whose
// 32-bit variant gives the same values; TestIntNEqualsRandIntN holds it
// to the library's).
func intN(source *rand.PCG, n uint64) uint64 {
	if n&(n-1) == 0 { // a power of two: mask
		return source.Uint64() & (n - 1)
	}
	hi, lo := bits.Mul64(source.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(source.Uint64(), n)
		}
	}
	return hi
}

// chanceOf is rand.Rand.Float64() < p, on the source itself and without
// the division: Float64 is x/2^53 for the low 53 bits x, and both x and
// p*2^53 are exact in a float64, so x < p*2^53 is the same test.
func chanceOf(source *rand.PCG, p float64) uint32 { return chanceAnswer(source.Uint64(), p) }

// chanceAnswer is chanceOf's test of a drawn value x. The drawing paths
// call it with the draw written in place: chanceOf with the generator
// inlined is too big to inline itself, and its call was a quarter of the
// cost of a step's global fault draws.
func chanceAnswer(x uint64, p float64) uint32 {
	if float64(x<<11>>11) < p*(1<<53) {
		return 1
	}
	return 0
}

func (d *Decisions) next() uint32 {
	if d.position >= len(d.replay) {
		d.position++
		return 0
	}
	v := d.replay[d.position]
	d.position++
	return v
}

func (d *Decisions) record(v uint32) {
	l := d.log
	l.recorded = append(l.recorded, v)
	if !l.single {
		l.tags = append(l.tags, d.id)
	}
}

// Recorded returns the answers given so far, by every stream, in draw
// order. The caller must not modify it.
func (d *Decisions) Recorded() []uint32 { return d.log.recorded }

// Tags returns each recorded answer's stream (an index into Keys); nil for
// a single-stream source.
func (d *Decisions) Tags() []uint16 { return d.log.tags }

// Keys returns the stream keys, by index; nil for a single-stream source.
func (d *Decisions) Keys() []string { return d.log.keys }

// Len returns the number of answers given so far.
func (d *Decisions) Len() int { return len(d.log.recorded) }

// FormatDecisions renders a decision list compactly for seed files: values
// separated by commas, a run of n equal values written value*n.
func FormatDecisions(list []uint32) string {
	var b []byte
	for i := 0; i < len(list); {
		j := i
		for j < len(list) && list[j] == list[i] {
			j++
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, uint64(list[i]), 10)
		if j-i > 1 {
			b = append(b, '*')
			b = strconv.AppendInt(b, int64(j-i), 10)
		}
		i = j
	}
	return string(b)
}

// decisionsMax bounds a parsed decision list, so a corrupt seed file cannot
// make ParseDecisions allocate without limit.
const decisionsMax = 1 << 26

// ParseDecisions is the inverse of FormatDecisions.
func ParseDecisions(s string) ([]uint32, error) {
	list := []uint32{}
	if s == "" {
		return list, nil
	}
	for _, field := range strings.Split(s, ",") {
		value, count := field, "1"
		if v, c, ok := strings.Cut(field, "*"); ok {
			value, count = v, c
		}
		v, err := strconv.ParseUint(value, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("sim: decision %q: %w", field, err)
		}
		n, err := strconv.Atoi(count)
		if err != nil || n < 1 || len(list)+n > decisionsMax {
			return nil, fmt.Errorf("sim: decision run %q: bad or too long a count", field)
		}
		for k := 0; k < n; k++ {
			list = append(list, uint32(v))
		}
	}
	return list, nil
}
