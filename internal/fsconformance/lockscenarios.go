package fsconformance

// The advisory-lock scenarios (locks.go's verbs), appended to Scenarios.
func init() { Scenarios = append(Scenarios, LockScenarios...) }

// LockScenarios hold on Linux and on simfs alike.
var LockScenarios = []Scenario{
	// flock(2) belongs to the open file description: two opens of one file
	// in one process conflict. A conversion is not atomic: a failed
	// LOCK_NB conversion has dropped the old lock.
	{"flock-descriptions", `
write f x => ok
hold-as a f ro => ok
hold-as b f ro => ok
hold-as c f wo => ok
flock a ex-nb => ok
flock b ex-nb => EAGAIN
flock b sh-nb => EAGAIN
flock a ex-nb => ok
flock a sh-nb => ok
flock b sh-nb => ok
flock c ex-nb => EAGAIN
flock a ex-nb => EAGAIN
flock c sh-nb => ok
flock b un => ok
flock c un => ok
flock c ex-nb => ok
flock a sh-nb => EAGAIN
fclose c => ok
flock a ex-nb => ok
`},
	// The split inode: a lock on a file that is unlinked and created again
	// locks the old inode; the new file's lock is free.
	{"flock-unlinked-inode", `
write f x => ok
hold-as a f rw => ok
flock a ex-nb => ok
remove f => ok
write f y => ok
hold-as b f rw => ok
flock b ex-nb => ok
fclose a => ok
fclose b => ok
`},
	// POSIX record locks belong to the process: its two descriptions
	// never conflict, and closing ANY descriptor of the file drops every
	// lock the process holds on it. OFD queries from another description
	// see them (POSIX and OFD locks conflict even within one process).
	{"posix-close-any-descriptor", `
write f 0123456789 => ok
hold-as a f rw => ok
hold-as b f rw => ok
hold-as c f ro => ok
setlk a w 0 0 => ok
setlk b w 0 0 => ok
ofd-getlk c r 0 0 => wrlck 0+0 pid>0
getlk c r 0 0 => unlocked
fclose b => ok
ofd-getlk c r 0 0 => unlocked
setlk c w 0 0 => EBADF
setlk c r 0 5 => ok
ofd-getlk a w 3 1 => rdlck 0+5 pid>0
ofd-getlk a w 5 10 => unlocked
setlk a u 0 0 => ok
ofd-getlk a w 0 0 => unlocked
fclose a => ok
fclose c => ok
`},
	// Ranges: a POSIX owner's locks are cut, replaced and merged.
	{"posix-ranges", `
write f 0123456789 => ok
hold-as a f rw => ok
hold-as q f ro => ok
setlk a w 0 10 => ok
setlk a u 3 2 => ok
ofd-getlk q r 0 0 => wrlck 0+3 pid>0
ofd-getlk q r 3 2 => unlocked
ofd-getlk q r 4 3 => wrlck 5+5 pid>0
setlk a w 3 2 => ok
ofd-getlk q r 2 5 => wrlck 0+10 pid>0
setlk a r 2 2 => ok
ofd-getlk q w 2 2 => rdlck 2+2 pid>0
ofd-getlk q r 2 2 => unlocked
ofd-getlk q r 5 1 => wrlck 4+6 pid>0
setlk a u 0 0 => ok
setlk a w 20 -5 => ok
ofd-getlk q r 0 0 => wrlck 15+5 pid>0
setlk a w -1 1 => EINVAL
setlk a w 2 -3 => EINVAL
getlk a u 0 0 => EINVAL
setlk a w 30 0 => ok
ofd-getlk q r 1000 1 => wrlck 30+0 pid>0
fclose a => ok
ofd-getlk q r 0 0 => unlocked
`},
	// OFD locks belong to the description: another description of the
	// same process conflicts, closing another descriptor keeps them, and
	// queries report PID -1.
	{"ofd-locks", `
write f 0123456789 => ok
hold-as a f rw => ok
hold-as b f rw => ok
ofd-setlk a w 0 0 => ok
ofd-setlk b w 0 0 => EAGAIN
ofd-getlk b w 0 0 => wrlck 0+0 pid=-1
setlk b r 0 1 => EAGAIN
getlk b w 0 0 => wrlck 0+0 pid=-1
fclose b => ok
hold-as c f rw => ok
ofd-getlk c r 5 1 => wrlck 0+0 pid=-1
ofd-setlk a u 0 5 => ok
ofd-setlk c w 0 5 => ok
ofd-setlkw c w 1 2 => ok
fclose a => ok
ofd-setlk c w 0 0 => ok
fclose c => ok
`},
}
