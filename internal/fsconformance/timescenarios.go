package fsconformance

// The modification-time scenarios (times.go's verbs), appended to Scenarios.
func init() { Scenarios = append(Scenarios, TimeScenarios...) }

// TimeScenarios hold on Linux and on simfs alike.
var TimeScenarios = []Scenario{
	// Chtimes sets the time exactly (nanoseconds); a zero time is
	// UTIME_OMIT; a write, a truncation and an O_TRUNC open stamp the
	// writer's now. Only size-changing truncations are stamped here: ext4
	// also stamps one to the same size (and an O_TRUNC of an empty file),
	// as simfs does, but xfs and btrfs skip it (.ci/realfs runs this on
	// all three).
	{"mtime-stamps", `
write f hello => ok
mtime f => mtime>t0
chtimes f => ok
mtime f => mtime=t0
chtimes-omit f => ok
chtimes-mtime-omit f => ok
mtime f => mtime=t0
append f ! => ok
mtime f => mtime>t0
chtimes f => ok
truncate f 7 => ok
mtime f => mtime>t0
read f => "hello!\x00"
chtimes f => ok
truncate f 3 => ok
stat f => file nlink=1 size=3 perm=600 id=A
read f => "hel"
truncate f 5 => ok
read f => "hel\x00\x00"
chtimes f => ok
open-trunc f => ok
mtime f => mtime>t0
chtimes f => ok
hold f => ok
fstat f => file nlink=1 size=0 perm=600 id=A
chtimes missing => ENOENT
chtimes-omit missing => ok
truncate missing 1 => ENOENT
truncate f -1 => EINVAL
mkdir d => ok
truncate d 0 => EISDIR
chtimes d => ok
mtime d => mtime=t0
symlink f l => ok
chtimes l => ok
mtime l => mtime=t0
`},
	// Seek, ReadAt and ftruncate on an open file: ReadAt leaves the
	// position alone and reports a short read with io.EOF; a write past
	// the end leaves a zero-filled gap; ftruncate needs a descriptor open
	// for writing and stamps the time.
	{"seek-readat-ftruncate", `
write f 0123456789 => ok
hold-as rw f rw => ok
hold-as ro f ro => ok
freadat ro 2 3 => "234"
freadat ro 8 5 => "89"+EOF
freadat ro 10 1 => ""+EOF
freadat ro -1 1 => EINVAL
fseek rw 4 set => pos=4
fwrite-at rw ab => ok
fseek rw 0 cur => pos=6
fseek rw -2 end => pos=8
fseek rw -9 cur => EINVAL
fseek rw 12 set => pos=12
fwrite-at rw Z => ok
read f => "0123ab6789\x00\x00Z"
chtimes f => ok
fmtime ro => mtime=t0
ftruncate ro 2 => EINVAL
ftruncate rw -1 => EINVAL
ftruncate rw 4 => ok
fmtime ro => mtime>t0
read f => "0123"
fseek rw 0 set => pos=0
freadat rw 1 2 => "12"
fseek rw 0 cur => pos=0
`},
}
