package campaign

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/leasekit/leasekit/sim"
)

// Replay is one bit-exact rerun of a spec with its trace.
type Replay struct {
	Spec    Spec
	Result  sim.Result
	Finding Finding
	Verdict Verdict
	// Trace is the annotated step-by-step trace.
	Trace []byte
}

// ReplaySpec reruns spec with a trace. visualize asks for porcupine's
// visualization (Verdict.Visualize).
func (c *Catalog) ReplaySpec(spec Spec, visualize bool) (*Replay, error) {
	var trace annotator
	result, finding, verdict, err := c.Execute(spec, &trace, visualize)
	if err != nil {
		return nil, err
	}
	if visualize && verdict.Visualize == nil {
		verdict.Visualize = c.visualizeHistory(spec.Engine, result.History)
	}
	return &Replay{Spec: spec, Result: result, Finding: finding, Verdict: verdict, Trace: trace.annotated()}, nil
}

// visualizeHistory is the porcupine visualization of a run's history when
// the engine has a model, nil otherwise. A run the simulator itself failed
// (an invariant, a panic, liveness) never reached the history check, yet
// its history is what a reader wants to see beside the failure.
func (c *Catalog) visualizeHistory(engine string, history []sim.Operation) func(io.Writer) error {
	e, err := c.Lookup(engine)
	if err != nil || e.History == nil {
		return nil
	}
	return func(w io.Writer) error { return e.Visualize(history, w) }
}

// WriteHTMLFile replays spec with porcupine's visualization and writes its
// one-page report (WriteHTML) to path: the page of `leasesim replay --html`
// and of simtest's -simtest.html.
func (c *Catalog) WriteHTMLFile(path string, spec Spec) (*Replay, error) {
	replay, err := c.ReplaySpec(spec, true)
	if err != nil {
		return nil, err
	}
	var page bytes.Buffer
	if err := replay.WriteHTML(&page); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, page.Bytes(), 0o644); err != nil {
		return nil, err
	}
	return replay, nil
}

// ReplayTwice replays spec with its trace, then again without one, and
// requires the two runs to agree: their hashes (which fold in every step's
// process, operation, path, result and time) and their decision lists. The
// second run is the one a campaign makes, untraced, so the check also shows
// that tracing does not change a run; and it costs a third of a traced
// replay. On a disagreement the spec is replayed traced once more, and the
// error names the first trace line the two traced runs differ at, or says
// that only tracing changed the run.
func (c *Catalog) ReplayTwice(spec Spec) (*Replay, error) {
	first, err := c.ReplaySpec(spec, false)
	if err != nil {
		return nil, err
	}
	second, _, _, err := c.Execute(spec, nil, false)
	if err != nil {
		return nil, err
	}
	if first.Result.Hash == second.Hash && slices.Equal(first.Result.Decisions, second.Decisions) {
		return first, nil
	}
	third, err := c.ReplaySpec(spec, false)
	if err != nil {
		return nil, err
	}
	if line, a, b, ok := firstDifference(first.Trace, third.Trace); ok {
		return first, fmt.Errorf("replays diverge at trace line %d:\n  %s\n  %s", line, a, b)
	}
	if first.Result.Hash != third.Result.Hash {
		return first, fmt.Errorf("replays diverge: the same trace, hashes %016x and %016x", first.Result.Hash, third.Result.Hash)
	}
	return first, fmt.Errorf("replays diverge: the traced run (hash %016x, %d decisions) and the untraced run (hash %016x, %d decisions) differ: tracing changes the run",
		first.Result.Hash, len(first.Result.Decisions), second.Hash, len(second.Decisions))
}

// firstDifference is the first line (1-based) at which two traces differ,
// with both lines; ok false when they are equal. A trace that is a prefix of
// the other differs where the shorter one ends ("(end of trace)").
func firstDifference(a, b []byte) (line int, lineA, lineB string, ok bool) {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := 0; i < max(len(la), len(lb)); i++ {
		if x, y := lineAt(la, i), lineAt(lb, i); x != y {
			return i + 1, x, y, true
		}
	}
	return 0, "", "", false
}

func lineAt(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(end of trace)"
}

// ContextSwitches counts the steps of a trace whose process differs from the
// previous step's: how often the schedule switches process, the number a
// reader follows. (A choice count counts a random scheduler's every pick of
// a non-first process, so a process running alone for 40 steps while
// another waits is 40 choices but one switch.)
func ContextSwitches(trace []byte) int {
	switches := 0
	previous := ""
	for _, line := range strings.Split(string(trace), "\n") {
		if !strings.Contains(line, " op=") {
			continue
		}
		proc := field(line, "proc")
		if previous != "" && proc != previous {
			switches++
		}
		previous = proc
	}
	return switches
}

// mutatingOps are the operations whose effect stays volatile (lost by a
// power loss) until an fsync of the file or its directory.
var mutatingOps = map[string]string{
	"openfile": "creates an entry if O_CREATE", "mkdir": "new directory entry", "mkdirtemp": "new directory entry",
	"rename": "moves a directory entry", "renamenoreplace": "moves a directory entry", "link": "new directory entry",
	"symlink": "new directory entry", "remove": "drops a directory entry", "chmod": "changes metadata",
	"write": "file data",
}

// annotator is a replay's trace writer. It makes the simulator's trace
// readable as it is written: each process step says whether its FS change is
// volatile or made durable. Annotating line by line holds a long trace (a
// dirlease run's is megabytes) once, not as a raw copy and an annotated one.
type annotator struct {
	line []byte // the line being written: the simulator writes one in pieces
	out  []byte
}

func (a *annotator) Write(p []byte) (int, error) {
	n := len(p)
	for {
		end := bytes.IndexByte(p, '\n')
		if end < 0 {
			a.line = append(a.line, p...)
			return n, nil
		}
		a.line = append(a.line, p[:end]...)
		a.flushLine()
		p = p[end+1:]
	}
}

// annotated is the trace written so far, a last line without its newline
// ended.
func (a *annotator) annotated() []byte {
	if len(a.line) > 0 {
		a.flushLine()
	}
	return a.out
}

func (a *annotator) flushLine() {
	text := string(a.line)
	a.line = a.line[:0]
	a.out = append(a.out, text...)
	op := field(text, "op")
	switch {
	case op == "fsync" && field(text, "result") == "ok":
		a.out = append(a.out, "   # durable: synced"...)
	case op != "" && mutatingOps[op] != "" && field(text, "result") == "ok":
		a.out = append(a.out, "   # volatile: "...)
		a.out = append(a.out, mutatingOps[op]...)
		a.out = append(a.out, " (lost by power loss until fsync)"...)
	case strings.Contains(text, " crash proc="):
		a.out = append(a.out, "   # SIGKILL here: the op above never runs"...)
	case strings.Contains(text, " fault=powerloss"):
		a.out = append(a.out, "   # power loss: unsynced changes may be lost"...)
	}
	a.out = append(a.out, '\n')
}

// field returns the value of key=value in a trace line.
func field(line, key string) string {
	for f := range strings.FieldsSeq(line) {
		if len(f) > len(key) && f[len(key)] == '=' && strings.HasPrefix(f, key) {
			return f[len(key)+1:]
		}
	}
	return ""
}

// WriteText writes the readable replay report: knobs, trace, history,
// verdict.
func (r *Replay) WriteText(w io.Writer) {
	fmt.Fprintf(w, "== replay of %s seed=%d (%d decisions, %d choices, %d context switches)\n", r.Spec.Engine,
		r.Spec.Seed, len(r.Spec.Decisions), Choices(r.Spec.Decisions), ContextSwitches(r.Trace))
	w.Write(r.Trace)
	fmt.Fprintf(w, "== history (%d operations)\n", len(r.Result.History))
	writeHistory(w, r.Result.History)
	fmt.Fprintf(w, "== verdict\n")
	switch {
	case r.Verdict.OK:
		fmt.Fprintln(w, "porcupine: linearizable (or not checked)")
	default:
		fmt.Fprintf(w, "porcupine: NOT linearizable: %s\n", r.Verdict.Message)
		if r.Verdict.Explain != nil {
			io.WriteString(w, r.Verdict.Explain())
		}
	}
	r.WriteVerdict(w)
}

// WriteVerdict writes the outcome, the probes hit and the failure.
func (r *Replay) WriteVerdict(w io.Writer) {
	fmt.Fprintf(w, "outcome=%v steps=%d processes=%d hash=%016x\n", r.Finding.Outcome, r.Result.Steps,
		r.Result.Processes, r.Result.Hash)
	fmt.Fprintf(w, "probes: %s\n", strings.Join(r.Result.ProbeLines(), " "))
	if !r.Finding.OK() {
		fmt.Fprintf(w, "class=%s\nmessage=%s\n", r.Finding.Class, r.Finding.Message)
	}
}

func writeHistory(w io.Writer, history []sim.Operation) {
	for _, op := range history {
		output := fmt.Sprintf("%+v", op.Output)
		if op.Unknown {
			output = "unknown (cut short)"
		}
		fmt.Fprintf(w, "lane=%d proc=%s %s(%+v) -> %s  [%d, %d]\n", op.Lane, op.Proc, op.Op, op.Input, output, op.Call, op.Return)
	}
}

// WriteHTML writes one self-contained page: the knobs, the fault and
// process timeline, and porcupine's visualization (embedded in an iframe's
// srcdoc, so the page needs no other file).
func (r *Replay) WriteHTML(w io.Writer) error {
	var b bytes.Buffer
	b.WriteString("<!doctype html><html><head><meta charset=\"utf-8\"><title>leasesim replay</title>\n<style>" +
		"body{font-family:sans-serif;margin:1em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px}" +
		".fault{background:#fdd}.crash{background:#fbb}.spawn{background:#dfd}.exit{background:#eee}pre{background:#f6f6f6;padding:6px}" +
		"</style></head><body>\n")
	fmt.Fprintf(&b, "<h1>%s seed %d: %s</h1>\n", html.EscapeString(r.Spec.Engine), r.Spec.Seed, html.EscapeString(r.Finding.String()))
	fmt.Fprintf(&b, "<pre>%s</pre>\n", html.EscapeString(strings.Join(r.Spec.knobLines(), "\n")))
	if !r.Finding.OK() {
		fmt.Fprintf(&b, "<p><b>%s</b></p>\n", html.EscapeString(r.Finding.Message))
	}
	b.WriteString("<h2>Fault timeline</h2>\n<table><tr><th>step</th><th>time (µs)</th><th>event</th></tr>\n")
	for _, line := range strings.Split(string(r.Trace), "\n") {
		class := timelineClass(line)
		if class == "" {
			continue
		}
		t := field(line, "t")
		if len(t) > 3 {
			t = t[:len(t)-3]
		}
		rest := line
		if i := strings.Index(line, " "); i >= 0 {
			if j := strings.Index(line[i+1:], " "); j >= 0 {
				rest = line[i+1+j+1:]
			}
		}
		fmt.Fprintf(&b, "<tr class=%q><td>%s</td><td>%s</td><td>%s</td></tr>\n", class,
			html.EscapeString(field(line, "step")), html.EscapeString(t), html.EscapeString(rest))
	}
	b.WriteString("</table>\n<h2>Linearizability (porcupine)</h2>\n")
	if r.Verdict.Visualize == nil {
		b.WriteString("<p>No visualization: the engine has no porcupine model (Engine.History).</p>\n")
	} else {
		var viz bytes.Buffer
		if err := r.Verdict.Visualize(&viz); err != nil {
			return fmt.Errorf("porcupine visualization: %w", err)
		}
		fmt.Fprintf(&b, "<iframe style=\"width:100%%;height:80vh;border:1px solid #ccc\" srcdoc=\"%s\"></iframe>\n",
			html.EscapeString(viz.String()))
	}
	b.WriteString("<h2>Trace</h2>\n<pre>")
	b.WriteString(html.EscapeString(string(r.Trace)))
	b.WriteString("</pre></body></html>\n")
	_, err := w.Write(b.Bytes())
	return err
}

func timelineClass(line string) string {
	switch {
	case strings.Contains(line, " fault="):
		return "fault"
	case strings.Contains(line, " crash proc="):
		return "crash"
	case strings.Contains(line, " spawn proc="):
		return "spawn"
	case strings.Contains(line, " exit proc="):
		return "exit"
	case strings.Contains(line, " clock-jump "):
		return "exit"
	}
	return ""
}

// DriftReport compares a seed file's recorded run with its replay (see
// Drift): the line `leasesim replay` and `explain` print.
func (c *Catalog) DriftReport(file SeedFile, replay *Replay) string {
	e, err := c.Lookup(file.Spec.Engine)
	if err != nil {
		return err.Error()
	}
	return DriftOf(file, e, replay.Result, replay.Finding).String()
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

// Explain writes a short human account of a seed file: what it stores, what
// it finds now, and the last steps before the finding.
func (c *Catalog) Explain(w io.Writer, file SeedFile, tail int) error {
	replay, err := c.ReplaySpec(file.Spec, false)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s seed %d, scheduler %v, %d processes spawned, %d steps\n", file.Spec.Engine, file.Spec.Seed,
		file.Spec.Scheduler, replay.Result.Processes, replay.Result.Steps)
	fmt.Fprintf(w, "recorded: %v\nnow:      %v\n", file.Expect, replay.Finding)
	fmt.Fprintf(w, "drift:    %s\n", c.DriftReport(file, replay))
	if p := file.Provenance; p != nil {
		fmt.Fprintf(w, "recorded at commit %s with %s, workload version %d\n", orUnknown(p.Commit), p.Go, p.Workload)
	}
	if !replay.Finding.OK() {
		fmt.Fprintf(w, "message:  %s\n", firstLine(replay.Finding.Message))
	}
	fmt.Fprintf(w, "knobs:    %s\n", strings.Join(file.Spec.knobLines()[2:], " "))
	fmt.Fprintf(w, "decisions: %d, of which %d are choices (non-zero: a non-default process pick, a fault, a longer step)\n",
		len(file.Spec.Decisions), Choices(file.Spec.Decisions))
	enabled := []string{}
	for _, name := range faultNames {
		if p := file.Spec.Faults.Get(name); p > 0 {
			enabled = append(enabled, fmt.Sprintf("%s=%g", name, p))
		}
	}
	fmt.Fprintf(w, "faults enabled: %s\n", strings.Join(append(enabled, "(none)")[:max(len(enabled), 1)], " "))
	events := 0
	for _, line := range strings.Split(string(replay.Trace), "\n") {
		if timelineClass(line) == "fault" || timelineClass(line) == "crash" {
			events++
		}
	}
	fmt.Fprintf(w, "fault events: %d\n", events)
	fmt.Fprintf(w, "history: %d operations\n", len(replay.Result.History))
	writeHistory(w, replay.Result.History)
	lines := strings.Split(strings.TrimSuffix(string(replay.Trace), "\n"), "\n")
	fmt.Fprintf(w, "last %d trace lines:\n", min(tail, len(lines)))
	for _, line := range lines[max(len(lines)-tail, 0):] {
		fmt.Fprintf(w, "  %s\n", line)
	}
	return nil
}
