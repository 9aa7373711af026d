package fsconformance

// Scenarios are the golden scripts. Each must hold on Linux (ext4) and on
// simfs alike.
var Scenarios = []Scenario{
	// The directory-handle (*at) methods act on the directory the handle
	// has open: renaming its path away and putting a symlink there changes
	// nothing for the handle. Names are single components (EINVAL
	// otherwise), and nothing follows a final symlink.
	{"at-handles", `
mkdir d => ok
write d/a one => ok
mkdir d/sub => ok
mkdir outside => ok
write outside/secret s => ok
symlink ../outside d/link => ok
opendir d => ok
at-readdir d => [a link@ sub/]
at-stat d a => file nlink=1 size=3 perm=600 id=A
at-stat d link => symlink size=10 id=B
at-stat d sub => dir nlink=2 perm=700 id=C
at-stat d missing => ENOENT
at-stat d .. => EINVAL
at-stat d . => EINVAL
at-stat d sub/x => EINVAL
at-remove d link/secret => EINVAL
at-read d a => "one"
at-read d link => ELOOP
at-open-dir d link => ENOTDIR
at-open-dir d a => ENOTDIR
at-open-dir d sub => ok
at-create d a => EEXIST
at-create d link => EEXIST
at-remove d sub => EISDIR
at-rmdir d a => ENOTDIR
at-rmdir d link => ENOTDIR
at-remove d link => ok
read outside/secret => "s"
rename d d.moved => ok
symlink outside d => ok
at-readdir d => [a sub/]
at-create d b => ok
read d.moved/b => ""
readdir outside => [secret]
at-remove d a => ok
readdir d.moved => [b sub/]
at-rmdir d sub => ok
at-remove d b => ok
readdir d.moved => []
readdir outside => [secret]
fclose d => ok
remove d.moved => ok
`},
	{"at-removed-directory", `
mkdir e => ok
opendir e => ok
remove e => ok
at-create e x => ENOENT
at-stat e x => ENOENT
at-readdir e => ENOENT
fclose e => ok
`},
	// O_NOFOLLOW on a final symlink is ELOOP, except with O_DIRECTORY, where
	// Linux answers ENOTDIR (whatever the link points at, even nothing): the
	// O_DIRECTORY check on the link itself comes first. statefile.SyncDir
	// opens directories this way, so simfs must agree.
	{"nofollow-flags", `
mkdir dir => ok
write file x => ok
symlink dir ldir => ok
symlink file lfile => ok
symlink nothing ldangle => ok
open-nofollow ldir => ELOOP
open-nofollow lfile => ELOOP
open-nofollow ldangle => ELOOP
open-write-nofollow lfile => ELOOP
open-create-nofollow ldangle => ELOOP
create-excl ldir => EEXIST
open-dir-nofollow ldir => ENOTDIR
open-dir-nofollow lfile => ENOTDIR
open-dir-nofollow ldangle => ENOTDIR
open-dir-nofollow-write ldir => ENOTDIR
open-dir-nofollow dir => ok
open-dir-nofollow file => ENOTDIR
open-dir-nofollow-write dir => EISDIR
open-dir-nofollow-write file => ENOTDIR
open-write-nofollow dir => EISDIR
open-dir ldir => ok
open-dir lfile => ENOTDIR
open-dir ldangle => ENOENT
`},
	{"create-excl", `
write a hello => ok
create-excl a => EEXIST
create-excl b => ok
stat b => file nlink=1 size=0 perm=600 id=A
read a => "hello"
symlink nowhere dangling => ok
create-excl dangling => EEXIST
lstat nowhere => ENOENT
`},
	{"trunc-append", `
write a hello => ok
append a , world => ok
read a => "hello, world"
stat a => file nlink=1 size=12 perm=600 id=A
open-trunc a => ok
read a => ""
stat a => file nlink=1 size=0 perm=600 id=A
open-trunc missing => ENOENT
`},
	{"hard-links", `
write a x => ok
link a b => ok
stat a => file nlink=2 size=1 perm=600 id=A
stat b => file nlink=2 size=1 perm=600 id=A
link a b => EEXIST
write c y => ok
link a c => EEXIST
link missing d => ENOENT
mkdir dir => ok
link dir dir2 => EPERM
link a missing/d => ENOENT
remove a => ok
stat b => file nlink=1 size=1 perm=600 id=A
read b => "x"
`},
	{"rename-replace", `
write a one => ok
write b two => ok
stat a => file nlink=1 size=3 perm=600 id=A
stat b => file nlink=1 size=3 perm=600 id=B
rename a b => ok
read b => "one"
stat b => file nlink=1 size=3 perm=600 id=A
stat a => ENOENT
rename a b => ENOENT
rename b missing/c => ENOENT
`},
	{"rename-same-inode-noop", `
write a x => ok
link a b => ok
rename a b => ok
stat a => file nlink=2 size=1 perm=600 id=A
stat b => file nlink=2 size=1 perm=600 id=A
rename a a => ok
readdir . => [a b]
`},
	{"rename-dir-over-empty-dir", `
mkdir d => ok
write d/x x => ok
mkdir e => ok
stat d => dir nlink=2 perm=700 id=A
rename d e => ok
stat e => dir nlink=2 perm=700 id=A
stat d => ENOENT
read e/x => "x"
readdir . => [e/]
`},
	{"rename-dir-over-nonempty-dir", `
mkdir d => ok
mkdir e => ok
write e/x x => ok
rename d e => ENOTEMPTY | EEXIST
mkdir e/sub => ok
remove e/x => ok
rename d e => ENOTEMPTY | EEXIST
`},
	{"rename-type-mismatch", `
write a x => ok
mkdir d => ok
rename a d => EISDIR
rename d a => ENOTDIR
rename-noreplace a d => EEXIST
`},
	{"rename-into-own-subtree", `
mkdir d => ok
mkdir d/s => ok
rename d d/s/x => EINVAL
rename d d/x => EINVAL
rename d/s d => ENOTEMPTY
rename d d => ok
stat d/s => dir nlink=2 perm=700 id=A
`},
	{"rename-noreplace", `
write a one => ok
write b two => ok
rename-noreplace a b => EEXIST
read b => "two"
rename-noreplace a c => ok
stat a => ENOENT
read c => "one"
rename-noreplace c c => EEXIST
rename-noreplace missing z => ENOENT
`},
	{"rename-across-dirs", `
mkdir d => ok
mkdir e => ok
mkdir d/sub => ok
write d/f x => ok
stat d => dir nlink=3 perm=700 id=A
rename d/sub e/sub => ok
rename d/f e/f => ok
stat d => dir nlink=2 perm=700 id=A
stat e => dir nlink=3 perm=700 id=B
readdir e => [f sub/]
readdir d => []
`},
	{"symlinks", `
write a hi => ok
symlink a l => ok
lstat l => symlink size=1 id=A
stat l => file nlink=1 size=2 perm=600 id=B
stat a => file nlink=1 size=2 perm=600 id=B
readlink l => "a"
readlink a => EINVAL
readlink missing => ENOENT
open-nofollow l => ELOOP
open-nofollow a => ok
read l => "hi"
symlink x dangling => ok
read dangling => ENOENT
stat dangling => ENOENT
lstat dangling => symlink size=1 id=C
write dangling made => ok
read x => "made"
symlink a l => EEXIST
remove l => ok
stat a => file nlink=1 size=2 perm=600 id=B
symlink loop2 loop1 => ok
symlink loop1 loop2 => ok
stat loop1 => ELOOP
mkdir d => ok
symlink d dl => ok
write dl/f in => ok
read d/f => "in"
readdir dl => [f]
link l2 l3 => ENOENT
link dangling hard => ok
lstat hard => symlink size=1 id=C
`},
	{"remove", `
mkdir d => ok
write d/a x => ok
remove d => ENOTEMPTY
remove d/a => ok
remove d/a => ENOENT
remove d => ok
remove d => ENOENT
remove missing/x => ENOENT
write f x => ok
remove f/x => ENOTDIR
`},
	{"inode-reuse-new-identity", `
write a x => ok
stat a => file nlink=1 size=1 perm=600 id=A
remove a => ok
tick => ok
write b y => ok
stat b => file nlink=1 size=1 perm=600 id=B
tick => ok
write a z => ok
stat a => file nlink=1 size=1 perm=600 id=C
mkdir d => ok
stat d => dir nlink=2 perm=700 id=D
`},
	{"mkdir", `
mkdir d => ok
mkdir d => EEXIST
mkdir missing/x => ENOENT
write f x => ok
mkdir f => EEXIST
mkdir f/x => ENOTDIR
stat f/x => ENOTDIR
mkdir d/x => ok
stat d => dir nlink=3 perm=700 id=A
remove d/x => ok
stat d => dir nlink=2 perm=700 id=A
`},
	{"open-dir-rules", `
mkdir d => ok
write f x => ok
open-write d => EISDIR
open-create d => EISDIR
open-dir f => ENOTDIR
open-dir d => ok
fsync d => ok
fsync f => ok
readdir f => ENOTDIR
readdir missing => ENOENT
read d => EISDIR
`},
	{"unlinked-open-file", `
write a data => ok
hold a => ok
remove a => ok
fstat a => file nlink=0 size=4 perm=600 id=A
fread a => "data"
fwrite a more => ok
fclose a => ok
stat a => ENOENT
`},
	{"chmod", `
write a x => ok
chmod a 400 => ok
stat a => file nlink=1 size=1 perm=400 id=A
mkdir d => ok
chmod d 755 => ok
stat d => dir nlink=2 perm=755 id=B
chmod missing 600 => ENOENT
symlink a l => ok
chmod l 600 => ok
stat a => file nlink=1 size=1 perm=600 id=A
`},
	{"symlink-edges", `
write a x => ok
symlink a l => ok
open-create-nofollow l => ELOOP
open-create-nofollow a => ok
mkdir d => ok
symlink d dl => ok
remove dl => ok
stat d => dir nlink=2 perm=700 id=A
symlink missing dangling => ok
mkdir dangling => EEXIST
rename l l2 => ok
readlink l2 => "a"
write b y => ok
rename b l2 => ok
lstat l2 => file nlink=1 size=1 perm=600 id=B
readlink l2 => EINVAL
symlink a d/up => ok
read d/up => ENOENT
symlink ../a d/up2 => ok
read d/up2 => "x"
`},
	{"rename-edges", `
mkdir d => ok
mkdir e => ok
write d/a x => ok
link d/a e/b => ok
rename d/a e/b => ok
stat d/a => file nlink=2 size=1 perm=600 id=A
write f x => ok
rename d/a f/x => ENOTDIR
rename f/x d/a => ENOTDIR
mkdir d/sub => ok
mkdir e/sub => ok
stat e => dir nlink=3 perm=700 id=B
rename d/sub e/sub => ok
stat d => dir nlink=2 perm=700 id=C
stat e => dir nlink=3 perm=700 id=B
`},
	{"open-file-survives-rename-over", `
write a old => ok
hold a => ok
fstat a => file nlink=1 size=3 perm=600 id=A
write b new => ok
rename b a => ok
fstat a => file nlink=0 size=3 perm=600 id=A
fread a => "old"
read a => "new"
stat a => file nlink=1 size=3 perm=600 id=B
fclose a => ok
`},
	{"rdonly-trunc", `
write a hello => ok
open-rdonly-trunc a => ok
read a => ""
`},
}
