#!/usr/bin/env bash
# flock_dropin.sh LEASEREAL WORKDIR
#
# `leasereal run -n LOCK CMD` used exactly where a script would use
# `flock -n LOCK CMD`: a holder runs; a second concurrent run is refused
# with exit 1 (flock's conflict code) without running its command; -E sets
# that code as flock -E does; the holder's leasereal is SIGKILLed (a crash,
# which also kills its command); the next run reclaims the dead owner, says
# so on stderr, and runs.
set -u
lr=$1
work=$2
lock=$work/lock
fail() { echo "FAIL: $*" >&2; exit 1; }

owned() { "$lr" inspect --dir "$lock" 2>/dev/null | grep -q '"state": "owned"'; }

"$lr" run -n "$lock" sleep 30 &
holder=$!
for _ in $(seq 1 200); do
	owned && break
	sleep 0.05
done
owned || fail "the holder never acquired the lease"
echo "holder leasereal pid $holder holds $lock"

"$lr" run -n "$lock" touch "$work/second-ran"
code=$?
[ "$code" -eq 1 ] || fail "second concurrent run exited $code, want 1"
[ ! -e "$work/second-ran" ] || fail "the refused run's command ran"
echo "second concurrent run refused with exit $code"

"$lr" run -n -E 75 "$lock" true
code=$?
[ "$code" -eq 75 ] || fail "run -E 75 exited $code, want 75"

kill -KILL "$holder"
wait "$holder" 2>/dev/null
echo "holder SIGKILLed"
owned || fail "a killed holder's lease vanished by itself; it must stay until reclaimed"

"$lr" run -n "$lock" sh -c 'echo "third run holds epoch $LEASEKIT_EPOCH"' 2>"$work/third.err"
code=$?
cat "$work/third.err"
[ "$code" -eq 0 ] || fail "the run after the crash exited $code, want 0"
grep -q "reclaimed the stale owner pid $holder" "$work/third.err" || fail "the reclaim of pid $holder was not reported"
"$lr" inspect --dir "$lock" | grep -q '"state": "empty"' || fail "the lease is not free after the third run"
ls "$lock/quarantine" | grep -q '^receiver\.' || fail "the reclaimed owner record is not in quarantine/"
echo "PASS"
