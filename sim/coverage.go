package sim

// Coverage (Config.Coverage) is what guided search (campaign's guided
// campaigns) scores a run by, beyond the probes and the history: where in
// the decision list each operation returned and each probe first fired (so
// a mutation can aim at the decisions around a novel event), and the shape
// of the volumes' namespaces after each operation and at the end (simfs
// Shapes: names with identifiers folded, types, size classes). It costs a
// namespace walk per operation, so it is off in plain campaigns.

// shaper is what coverage needs of a volume's filesystem: simfs's Shapes.
type shaper interface{ Shapes(dst []uint64) []uint64 }

// noteCoverage stamps a returned (or recorded) operation.
func (w *World) noteCoverage(op *Operation) {
	if !w.config.Coverage {
		return
	}
	op.Decision = w.decisions.Len()
	op.Shapes = w.shapes()
}

// shapes lists the directory shapes of every simfs volume (each volume's
// mixed with its index).
func (w *World) shapes() []uint64 {
	var list []uint64
	for i, v := range w.volumes {
		s, ok := v.fs.(*SimfsVolume)
		if !ok {
			continue
		}
		var fs shaper = s.FS
		start := len(list)
		list = fs.Shapes(list)
		for k := start; k < len(list); k++ {
			list[k] = (list[k] ^ uint64(i)) * 0x100000001b3
		}
	}
	return list
}

// finishCoverage fills the result's coverage fields.
func (w *World) finishCoverage(result *Result) {
	if !w.config.Coverage {
		return
	}
	for i := range w.history {
		if op := &w.history[i]; op.Unknown && op.Decision == 0 {
			op.Decision = w.decisions.Len()
		}
	}
	result.ProbeAt = w.probeAt
	result.Shapes = w.shapes()
}
