#!/bin/sh
# bench-baseline.sh BASELINE_COMMIT [ROUNDS] [SEEDS]: this tree's leasesim
# bench side by side with the build of BASELINE_COMMIT, in one run (see
# docs/BENCH.md). Builds both leasesim binaries with their PGO profiles (the
# baseline's default.pgo as its `go build` does; this tree's
# cmd/leasesim/leasesim.pgo by -pgo, docs/BENCH.md "PGO"),
# then prints `leasesim bench --baseline` (seeds/s, steps/s, allocations
# per seed and porcupine share per engine, with ratios), and the
# allocations per seed of the build of BASELINE_COMMIT, whose bench report
# predates that column, from `go test -bench EngineSeeds -benchmem` there
# (8 seeds per op).
set -eu
base=${1:?usage: scripts/bench-baseline.sh BASELINE_COMMIT [ROUNDS] [SEEDS]}
rounds=${2:-5}
seeds=${3:-300}
top=$(git rev-parse --show-toplevel)
work=$(mktemp -d)
trap 'git -C "$top" worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git -C "$top" worktree add --detach "$work/base" "$base" >/dev/null 2>&1
(cd "$work/base" && go build -o "$work/leasesim-base" ./cmd/leasesim)
(cd "$top" && go build -pgo=cmd/leasesim/leasesim.pgo -o "$work/leasesim" ./cmd/leasesim)
"$work/leasesim" bench --baseline "$work/leasesim-base" --compare-rounds "$rounds" --seeds "$seeds"
echo
echo "Allocations per seed of $base (go test -bench EngineSeeds -benchmem -cpu 1, 8 seeds per op):"
echo
(cd "$work/base" && go test ./campaign -run '^$' -bench 'EngineSeeds' -benchmem -cpu 1 -benchtime 20x) |
	awk '/^BenchmarkEngineSeeds\// { for (i = 1; i <= NF; i++) if ($i == "allocs/op") printf "- %s: %.0f\n", $1, $(i-1) / 8 }'
