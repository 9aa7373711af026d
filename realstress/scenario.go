package realstress

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/leasekit/leasekit/lease"
)

// A scenario is a small script of lease steps over named actors, run once
// in the simulator's filesystem and process table (realstress/simworld, a
// test-only package: the shipped binary links no simulator) and once with
// real processes (RealWorld); the two must give the same outcomes. Lines:
//
//	acquire A        A's current incarnation acquires (session "A#k")
//	release A        A releases the generation it last acquired
//	inspect A        A inspects
//	kill A           SIGKILL A and reap it; the next use of A starts A#k+1
//	zombie A         SIGKILL A and leave it unreaped
//	reap A           reap A's zombie
//	upgrade A        replace A's executable on disk (a new file renamed over
//	                 the path) while A runs
//
// '#' starts a comment. Each step prints one outcome line; see Outcome.

// Step is one scenario line.
type Step struct {
	Verb  string
	Actor string
}

// ParseScenario parses a scenario script.
func ParseScenario(text string) ([]Step, error) {
	var steps []Step
	for number, line := range strings.Split(text, "\n") {
		if cut := strings.IndexByte(line, '#'); cut >= 0 {
			line = line[:cut]
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 2 {
			return nil, fmt.Errorf("line %d: want VERB ACTOR, got %q", number+1, line)
		}
		switch fields[0] {
		case "acquire", "release", "inspect", "kill", "zombie", "reap", "upgrade":
		default:
			return nil, fmt.Errorf("line %d: unknown verb %q", number+1, fields[0])
		}
		steps = append(steps, Step{Verb: fields[0], Actor: fields[1]})
	}
	return steps, nil
}

// Outcome is the result of one engine call in a scenario, in the form an
// actor process prints it (one JSON line).
type Outcome struct {
	Kind       string `json:"kind"`
	Generation string `json:"generation,omitempty"`
	Session    string `json:"session,omitempty"`
	Epoch      uint64 `json:"epoch,omitempty"`
	Reclaimed  int    `json:"reclaimed,omitempty"`
	// Reasons are the reclaims' reasons, in order.
	Reasons []string `json:"reasons,omitempty"`
	Reason  string   `json:"reason,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// World runs a scenario's processes.
type World interface {
	// Start starts a new incarnation of actor with the given session.
	Start(actor, session string) error
	// Do runs one engine call ("acquire", "release GEN", "inspect") in
	// actor's current incarnation.
	Do(actor, request string) (Outcome, error)
	// Kill SIGKILLs actor; reap says whether its parent reaps it at once.
	Kill(actor string, reap bool) error
	// Reap reaps actor's zombie.
	Reap(actor string) error
	// Upgrade replaces the executable every actor runs, on disk.
	Upgrade() error
	// Close ends every process still running.
	Close()
}

// RunScenario runs steps in world and returns one outcome line per step.
// Generations and epochs differ between worlds, so lines name owners by
// session and show epochs (which are deterministic).
func RunScenario(steps []Step, world World) ([]string, error) {
	incarnation := map[string]int{}
	alive := map[string]bool{}
	generation := map[string]string{}
	var lines []string
	for _, step := range steps {
		if !alive[step.Actor] && (step.Verb == "acquire" || step.Verb == "release" || step.Verb == "inspect") {
			incarnation[step.Actor]++
			if err := world.Start(step.Actor, fmt.Sprintf("%s#%d", step.Actor, incarnation[step.Actor])); err != nil {
				return lines, err
			}
			alive[step.Actor] = true
		}
		var line string
		switch step.Verb {
		case "kill", "zombie":
			if !alive[step.Actor] {
				return lines, fmt.Errorf("%s %s: not running", step.Verb, step.Actor)
			}
			if err := world.Kill(step.Actor, step.Verb == "kill"); err != nil {
				return lines, err
			}
			alive[step.Actor] = false
			line = map[string]string{"kill": "killed", "zombie": "zombie, not reaped"}[step.Verb]
		case "reap":
			if err := world.Reap(step.Actor); err != nil {
				return lines, err
			}
			line = "reaped"
		case "upgrade":
			if err := world.Upgrade(); err != nil {
				return lines, err
			}
			line = "executable replaced"
		default:
			request := step.Verb
			if step.Verb == "release" {
				request += " " + generation[step.Actor]
			}
			outcome, err := world.Do(step.Actor, request)
			if err != nil {
				return lines, err
			}
			if step.Verb == "acquire" && outcome.Kind == lease.Acquired.String() {
				generation[step.Actor] = outcome.Generation
			}
			line = describeOutcome(outcome)
		}
		lines = append(lines, fmt.Sprintf("%s %s: %s", step.Verb, step.Actor, line))
	}
	return lines, nil
}

func describeOutcome(o Outcome) string {
	switch o.Kind {
	case "acquired":
		text := fmt.Sprintf("acquired epoch=%d reclaimed=%d", o.Epoch, o.Reclaimed)
		if len(o.Reasons) > 0 {
			text += " (" + strings.Join(o.Reasons, "; ") + ")"
		}
		return text
	case "held", "owned":
		return fmt.Sprintf("%s by %s epoch=%d", o.Kind, o.Session, o.Epoch)
	case "refused":
		return "refused " + o.Reason
	case "error":
		return "error " + o.Error
	}
	return o.Kind
}

// DoScenarioRequest runs one request line with manager for session: the
// shared core of both worlds.
func DoScenarioRequest(manager *lease.Manager, session, request string) Outcome {
	ctx := context.Background()
	verb, argument, _ := strings.Cut(request, " ")
	switch verb {
	case "acquire":
		result, err := manager.Acquire(ctx, lease.AcquireRequest{SessionID: session, SessionFile: "/scenario/" + session})
		if err != nil {
			return Outcome{Kind: "error", Error: err.Error()}
		}
		out := Outcome{Kind: result.Kind.String(), Reclaimed: len(result.Reclaimed), Reason: string(result.Refusal.Reason)}
		for _, reclaim := range result.Reclaimed {
			out.Reasons = append(out.Reasons, reclaim.Reason)
		}
		if result.Kind != lease.Refused {
			out.Generation, out.Session, out.Epoch = result.Owner.Generation, result.Owner.SessionID, result.Owner.Epoch
		}
		return out
	case "release":
		result, err := manager.Release(ctx, argument)
		if err != nil && result.Kind != lease.Released {
			return Outcome{Kind: "error", Error: err.Error()}
		}
		return Outcome{Kind: result.Kind.String(), Reason: string(result.Refusal.Reason)}
	case "inspect":
		projection, err := manager.Inspect(ctx)
		if err != nil {
			return Outcome{Kind: "error", Error: err.Error()}
		}
		out := Outcome{Kind: projection.Kind.String()}
		if projection.Kind == lease.Owned {
			out.Generation, out.Session, out.Epoch = projection.Owner.Generation, projection.Owner.SessionID, projection.Owner.Epoch
		}
		return out
	}
	return Outcome{Kind: "error", Error: fmt.Sprintf("unknown request %q", request)}
}

// ActorMain is the hidden `leasereal scenario-actor` subcommand: it serves
// request lines from in with manager and session, one JSON outcome line
// each on out, until in ends.
func ActorMain(manager *lease.Manager, session string, in io.Reader, out io.Writer) error {
	scanner := bufio.NewScanner(in)
	for lines := 0; scanner.Scan(); lines++ {
		if lines >= scenarioStepsMax {
			return fmt.Errorf("scenario actor: more than %d requests", scenarioStepsMax)
		}
		data, err := json.Marshal(DoScenarioRequest(manager, session, scanner.Text()))
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(out, "%s\n", data); err != nil {
			return err
		}
	}
	return scanner.Err()
}

// scenarioStepsMax bounds the requests of one actor.
const scenarioStepsMax = 10_000
