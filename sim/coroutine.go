package sim

import (
	"fmt"
	"iter"
)

// coroutine is a goroutine that process bodies run on, one after another.
// An engine call grows a body's stack to tens of KiB, and a fresh goroutine
// per process grew it again from a few KiB each time, copying the deep
// frames at every doubling (about 5% of a campaign's CPU). A recycled
// coroutine keeps the stack it grew.
type coroutine struct {
	next func() (struct{}, bool)
	stop func()
	// proc is the process it runs, set before the process's first resume.
	proc *Proc
}

// loop runs the assigned process's body; when the body ends (or unwinds)
// it marks the process ended and waits, suspended, for the next one.
func (c *coroutine) loop(yield func(struct{}) bool) {
	for {
		c.proc.run(yield)
		c.proc.ended = true
		if !yield(struct{}{}) {
			return
		}
	}
}

// coroutinePool holds a run's coroutines; close stops them all, so a
// finished run leaks no goroutine.
type coroutinePool struct {
	idle []*coroutine
	all  []*coroutine
}

// take returns an idle coroutine, or a new one, assigned to p.
func (pool *coroutinePool) take(p *Proc) *coroutine {
	var c *coroutine
	if n := len(pool.idle); n > 0 {
		c, pool.idle = pool.idle[n-1], pool.idle[:n-1]
	} else {
		c = &coroutine{}
		c.next, c.stop = iter.Pull(c.loop)
		pool.all = append(pool.all, c)
	}
	c.proc = p
	return c
}

// release returns a coroutine whose process ended to the idle list.
func (pool *coroutinePool) release(c *coroutine) {
	if !c.proc.ended {
		panic("sim: releasing the coroutine of a process that has not ended")
	}
	c.proc = nil
	pool.idle = append(pool.idle, c)
}

// Coroutines lets consecutive runs share their coroutines, so a campaign
// worker's processes keep grown stacks from seed to seed. Pass the same
// Coroutines in Config.Coroutines to runs made one at a time (never two at
// once), and Close it when done: each run returns every coroutine idle.
type Coroutines struct{ pool coroutinePool }

// NewCoroutines returns an empty set.
func NewCoroutines() *Coroutines { return &Coroutines{} }

// Close stops the idle coroutines; the set may be used again after.
func (c *Coroutines) Close() { c.pool.close() }

// assertIdle panics unless every coroutine is idle: a run must not end
// with a body still on one.
func (pool *coroutinePool) assertIdle() {
	if len(pool.idle) != len(pool.all) {
		panic(fmt.Sprintf("sim: run ended with %d of %d coroutines busy", len(pool.all)-len(pool.idle), len(pool.all)))
	}
}

// close stops every coroutine.
func (pool *coroutinePool) close() {
	for _, c := range pool.all {
		c.stop()
	}
	pool.idle, pool.all = nil, nil
}
