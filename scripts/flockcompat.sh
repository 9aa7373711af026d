#!/usr/bin/env bash
# flockcompat.sh LEASEREAL WORKDIR
#
# Runs flock(1) and `leasereal run` side by side on the same command lines
# and prints one Markdown table row per case:
#   | case | command line | flock(1) | leasereal run |
# with the exit code each gave (or the value the case measures). Each row
# has its expected pair below; the script fails (exit 1) if either tool
# gave anything else. docs/LEASEREAL.md ("flock(1) compatibility") holds
# the same rows, and cmd/leasereal's TestFlockCompat checks that every row
# printed here is in that document, so the table stays true.
#
# In a command line, F stands for the lock: a file for flock, a lease
# directory for leasereal (both made fresh under WORKDIR).
set -u
lr=$1
work=$2
failures=0
step=0

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# tool NAME ARGS...: run flock or `leasereal run` with ARGS, each word F
# replaced by that tool's lock path, stdout and stderr into files; prints
# the exit code.
tool() {
	local name=$1 lock arg
	shift
	local args=()
	if [ "$name" = flock ]; then lock=$work/flock.lock; else lock=$work/lease; fi
	for arg in "$@"; do
		if [ "$arg" = F ]; then args+=("$lock"); else args+=("$arg"); fi
	done
	if [ "$name" = flock ]; then
		flock "${args[@]}" >"$work/$name.out" 2>"$work/$name.err"
	else
		"$lr" run "${args[@]}" >"$work/$name.out" 2>"$work/$name.err"
	fi
	echo $?
}

# shown ARGS...: the command line as the table shows it: words quoted as a
# shell would need them, WORKDIR written W.
shown() {
	local out="" arg
	for arg in "$@"; do
		arg=${arg//$work/W}
		if [[ $arg =~ ^[A-Za-z0-9_./=:-]+$ ]]; then out+="$arg "; else out+="'$arg' "; fi
	done
	echo "${out% }"
}

# row CASE WANT_FLOCK WANT_LEASEREAL ARGS...: one case, both tools.
row() {
	local name=$1 want_flock=$2 want_lease=$3
	shift 3
	local got_flock got_lease shown
	got_flock=$(tool flock "$@")
	got_lease=$(tool leasereal "$@")
	shown=$(shown "$@")
	report "$name" "$shown" "$want_flock" "$got_flock" "$want_lease" "$got_lease"
}

# report CASE SHOWN WANT_FLOCK GOT_FLOCK WANT_LEASEREAL GOT_LEASEREAL
report() {
	step=$((step + 1))
	printf '| %d | %s | `%s` | %s | %s |\n' "$step" "$1" "$2" "$4" "$6"
	[ "$4" = "$3" ] || fail "case $step ($1): flock gave $4, want $3; stderr: $(cat "$work/flock.err" 2>/dev/null)"
	[ "$6" = "$5" ] || fail "case $step ($1): leasereal gave $6, want $5; stderr: $(cat "$work/leasereal.err" 2>/dev/null)"
}

# scripted CASE SHOWN WANT_FLOCK WANT_LEASEREAL SCRIPT: SCRIPT is run by
# sh in a new session (setsid -w: its own process group, as a terminal
# job), with TOOL set to the tool's command prefix (`flock` or `leasereal
# run`) and F to its lock; prints the exit code, or what SCRIPT echoes on
# fd 3 when it measures something else.
scripted() {
	local name=$1 shown=$2 want_flock=$3 want_lease=$4 script=$5 got_flock got_lease
	got_flock=$(measure "flock" "$work/flock.lock" "$script")
	got_lease=$(measure "$lr run" "$work/lease" "$script")
	report "$name" "$shown" "$want_flock" "$got_flock" "$want_lease" "$got_lease"
}

measure() {
	local prefix=$1 lock=$2 script=$3 measured=$work/measured code
	rm -f "$measured" "$work/count"
	TOOL=$prefix F=$lock COUNT=$work/count setsid -w sh -c "$script" 3>"$measured" >"$work/out" 2>&1
	code=$?
	if [ -s "$measured" ]; then cat "$measured"; else echo "$code"; fi
}

# start_holder TOOL_NAME: starts a holder of the lock that runs until killed;
# its command's pid lands in WORKDIR/TOOL_NAME.holder.
start_holder() {
	local name=$1 pidfile=$work/$1.holder
	rm -f "$pidfile"
	if [ "$name" = flock ]; then
		flock "$work/flock.lock" sh -c 'echo $$ > "$1"; exec sleep 60' sh "$pidfile" &
	else
		"$lr" run "$work/lease" sh -c 'echo $$ > "$1"; exec sleep 60' sh "$pidfile" &
	fi
	for _ in $(seq 1 500); do [ -s "$pidfile" ] && return 0; sleep 0.01; done
	fail "the $name holder never started"
}

stop_holders() {
	for name in flock leasereal; do
		[ -s "$work/$name.holder" ] && kill "$(cat "$work/$name.holder")" 2>/dev/null
	done
	wait
}

missing=$work/missing-parent

echo '| # | case | command line (F: the lock) | flock(1) | leasereal run |'
echo '|---|---|---|---|---|'
row "free" 0 0 -n F true
row "the command's exit code passes through" 42 42 -n F sh -c 'exit 42'
row "a command killed by SIGTERM: 128+15" 143 143 -n F sh -c 'kill -TERM $$'
row "-c: a shell command" 3 3 -n F -c 'exit 3'
row "-o is accepted" 0 0 -o F true
row "--verbose" 0 0 --verbose F true
row "-w 0 is -n" 0 0 -w 0 F true
row "long options" 0 0 --nonblock --conflict-exit-code=9 --timeout=1 F true

start_holder flock
start_holder leasereal
row "busy, -n: the conflict code 1" 1 1 -n F touch "$work/ran"
row "busy, -n -E 7" 7 7 -n -E 7 F true
row "busy, clustered -nE7" 7 7 -nE7 F true
row "busy, -w 0.3 times out: 1" 1 1 -w 0.3 F true
row "busy, -w 0.3 -E 75" 75 75 -w 0.3 -E 75 F true
[ ! -e "$work/ran" ] || fail "a busy run's command ran"
stop_holders

# A holder that ends by itself after 0.5 s: -w 10 waits for it.
flock "$work/flock.lock" sleep 0.5 &
"$lr" run "$work/lease" sleep 0.5 &
sleep 0.2
row "-w 10 waits for a holder that ends" 0 0 -w 10 F true
wait

row "the command cannot be run" 69 127 -n F "$work/no-such-command"
row "unknown option" 64 2 --bogus F true
row "no command" 64 2 F
row "-c without its argument" 64 2 F -c
row "-E out of range" 64 2 -E 256 F true
row "invalid -w" 64 2 -w soon F true
row "-s (shared)" 0 2 -s F true
row "-x (exclusive)" 0 2 -x F true
row "-u (unlock)" 0 2 -u F true
row "-F (no fork)" 0 2 -F F true
row "file descriptor mode: flock 9" 65 2 9
row "the lock's parent directory is missing" 66 0 -n "$missing/lock" true

scripted "SIGHUP to the group under an inherited ignore (nohup)" \
	"trap '' HUP; TOOL -n F sh -c 'kill -HUP 0; sleep 0.2'" 0 0 \
	"trap '' HUP; exec \$TOOL -n \"\$F\" sh -c 'kill -HUP 0; sleep 0.2'"
scripted "SIGHUP to the group: the command dies of it" \
	"TOOL -n F sh -c 'kill -HUP 0; sleep 0.2'" 129 129 \
	"exec \$TOOL -n \"\$F\" sh -c 'kill -HUP 0; sleep 0.2'"
scripted "SIGINT to the group (Ctrl-C): SIGINTs the command got" \
	"TOOL -n F sh -c 'trap \"echo INT >>count\" INT; kill -INT 0; sleep 0.3'" 1 1 \
	"trap : INT; \$TOOL -n \"\$F\" sh -c 'trap \"echo INT >> \$COUNT\" INT; kill -INT 0; sleep 0.3'; i=0; while [ ! -s \"\$COUNT\" ] && [ \$i -lt 500 ]; do sleep 0.01; i=\$((i+1)); done; sleep 0.2; wc -l < \"\$COUNT\" | tr -d ' ' >&3"
scripted "SIGINT to the group, the command ignores it and exits 5" \
	"TOOL -n F sh -c 'trap \"\" INT; kill -INT 0; sleep 0.2; exit 5'" 130 5 \
	"exec \$TOOL -n \"\$F\" sh -c 'trap \"\" INT; kill -INT 0; sleep 0.2; exit 5'"

if [ "$failures" -ne 0 ]; then
	echo "FAIL: $failures case(s) differ from the expected table" >&2
	exit 1
fi
echo "PASS"
