package realstress

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Quiescent points on purpose. With 8 workers each starting its next
// operation microseconds after the last one returned, a stress history has
// no instant at which no operation is open, so CheckSegmented would find
// nothing to cut at. Now and then the parent pauses every worker BETWEEN two
// of its operations: it publishes a pause generation (the file "pause" in the
// barrier directory), each worker, before its next call, acknowledges it
// (an "ack-<gen>-<lane>" file) and waits, and once every live worker has
// acknowledged (a killed one has been reaped and its death stamped) the
// parent removes the pause. No operation is open between the last
// acknowledgement and the removal, so the history has a quiescent point
// there. The pause only delays callers, a schedule the kernel could have
// produced; the checker finds the points in the stamps and trusts nothing
// the barrier says.

// Bounds of the barrier.
const (
	// quiesceWaitMax bounds a worker's wait for the parent to lift a pause,
	// and the parent's wait for the acknowledgements (it then lifts the
	// pause without a quiescent point: nothing is lost but a cut).
	quiesceWaitMax = 30 * time.Second
	quiescePoll    = 200 * time.Microsecond
	// DefaultQuiesceEvery is how often the parent pauses the workers.
	DefaultQuiesceEvery = 250 * time.Millisecond
)

// quiesceWorker is a worker's side of the barrier.
type quiesceWorker struct {
	dir   string // "" = no barrier
	lane  int
	acked int
}

func pausePath(dir string) string { return filepath.Join(dir, "pause") }

func ackPath(dir string, generation, lane int) string {
	return filepath.Join(dir, fmt.Sprintf("ack-%d-%d", generation, lane))
}

// readPause returns the published pause generation, 0 if none.
func readPause(dir string) (int, error) {
	data, err := os.ReadFile(pausePath(dir))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	generation, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || generation <= 0 {
		return 0, fmt.Errorf("barrier: pause file holds %q", data)
	}
	return generation, nil
}

// wait runs between two operations: if a pause is published that this
// incarnation has not acknowledged, it acknowledges and waits (bounded) for
// the pause to be lifted.
func (q *quiesceWorker) wait() error {
	if q.dir == "" {
		return nil
	}
	generation, err := readPause(q.dir)
	if err != nil || generation == 0 || generation <= q.acked {
		return err
	}
	if err := os.WriteFile(ackPath(q.dir, generation, q.lane), nil, 0o600); err != nil {
		return err
	}
	q.acked = generation
	deadline := time.Now().Add(quiesceWaitMax)
	for time.Now().Before(deadline) {
		current, err := readPause(q.dir)
		if err != nil || current != generation {
			return err
		}
		time.Sleep(quiescePoll)
	}
	return fmt.Errorf("barrier: pause %d was not lifted within %v", generation, quiesceWaitMax)
}

// quiesceParent is the parent's side: at most one pause at a time.
type quiesceParent struct {
	dir        string
	generation int
	pausing    bool
	since      time.Time
	// Points counts the pauses every live worker acknowledged; Abandoned
	// the ones lifted after quiesceWaitMax without that.
	points, abandoned int
}

// pause publishes the next generation (written aside, then renamed: a
// worker never reads half of it).
func (q *quiesceParent) pause() error {
	q.generation++
	staged := pausePath(q.dir) + ".new"
	if err := os.WriteFile(staged, []byte(strconv.Itoa(q.generation)+"\n"), 0o600); err != nil {
		return err
	}
	if err := os.Rename(staged, pausePath(q.dir)); err != nil {
		return err
	}
	q.pausing, q.since = true, time.Now()
	return nil
}

// settle lifts the pause once every lane in live has acknowledged it, or
// after quiesceWaitMax; it reports whether the pause is over.
func (q *quiesceParent) settle(live []int) (bool, error) {
	acked := true
	for _, lane := range live {
		if _, err := os.Stat(ackPath(q.dir, q.generation, lane)); err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				return false, err
			}
			acked = false
			break
		}
	}
	switch {
	case acked:
		q.points++
	case time.Since(q.since) > quiesceWaitMax:
		q.abandoned++
	default:
		return false, nil
	}
	q.pausing = false
	return true, os.Remove(pausePath(q.dir))
}
