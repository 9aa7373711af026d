package simfs

import (
	"io/fs"
	"strings"
	"syscall"
)

// pathMax is Linux's PATH_MAX: a path (with its NUL) must fit in it.
const pathMax = 4096

// linksMax bounds symlink expansion in one path walk, as Linux's MAXSYMLINKS.
const linksMax = 40

// Access bits, as MAY_READ, MAY_WRITE and MAY_EXEC.
const (
	mayRead  fs.FileMode = 4
	mayWrite fs.FileMode = 2
	mayExec  fs.FileMode = 1
)

// may reports whether the view's uid has every access in want on n. Root
// bypasses DAC (CAP_DAC_OVERRIDE); the owner uses the user bits and everyone
// else the "other" bits, because simfs has no groups.
func (v *view) may(n *inode, want fs.FileMode) bool {
	if v.uid == 0 {
		return true
	}
	perm := n.mode.Perm()
	if n.uid == v.uid {
		perm >>= 6
	}
	return perm&want == want
}

// resolve walks name from the root. It returns the directory holding the
// final component, that component, and the inode it names (nil when absent).
// With follow, a final symlink is followed, and dir and base then name the
// symlink's target (so O_CREATE can create through a dangling link). base is
// "" when name names the root itself.
func (v *view) resolve(name string, follow bool) (dir *inode, base string, node *inode, errno syscall.Errno) {
	hops := 0
	if start, walked, ok := v.cachedPrefix(name); ok {
		return v.walk(start, name, walked, follow, &hops, false)
	}
	return v.walkPath(v.fs.root, name, follow, &hops, true)
}

// resolveAt is openat(2)'s walk: p from start, or from the root when p is
// absolute.
func (v *view) resolveAt(start *inode, p string, follow bool) (*inode, string, *inode, syscall.Errno) {
	if start == v.fs.root || (p != "" && p[0] == '/') {
		return v.resolve(p, follow)
	}
	hops := 0
	return v.walkPath(start, p, follow, &hops, false)
}

// prefixCache remembers where one of the view's recent walks from the root
// stood just before its final component: most calls name a file in a
// directory a recent call named one in (an engine moves between a few: the
// namespace, receiver.lock, the reclaims directory), and starting there
// saves a map lookup per directory level. A view keeps prefixSlots of them,
// replaced in turn. A cached walk is exact while FS.treeGen is unchanged:
// it crossed only directories (no symlinks), and a directory's names,
// parent and search permission change only through a link or unlink of a
// directory, a chmod or a crash, which all advance treeGen.
type prefixCache struct {
	path string // the walked prefix, ending in '/'
	dir  *inode // the directory it reached
	gen  uint64 // FS.treeGen it is valid for
}

// prefixSlots is how many walked prefixes a view remembers.
const prefixSlots = 4

// cachedPrefix returns the directory to walk name's final component from,
// and the length of the prefix walked to it, if name is a cached prefix
// plus one component. A cached prefix ends in '/' and the component has
// none, so the prefix can only be name up to its last slash: one search
// of name, then a comparison per slot.
func (v *view) cachedPrefix(name string) (*inode, int, bool) {
	if len(name) >= pathMax {
		return nil, 0, false
	}
	walked := strings.LastIndexByte(name, '/') + 1
	if walked == 0 || walked == len(name) {
		return nil, 0, false
	}
	prefix := name[:walked]
	for i := range v.prefix {
		c := &v.prefix[i]
		if c.dir != nil && c.gen == v.fs.treeGen && c.path == prefix {
			return c.dir, walked, true
		}
	}
	return nil, 0, false
}

// rememberPrefix caches that walking p[:i] from the root reached dir, in
// the slot that holds p[:i] already, or else in the next slot in turn.
func (v *view) rememberPrefix(p string, i int, dir *inode) {
	slot := v.prefixNext
	for k := range v.prefix {
		if v.prefix[k].path == p[:i] {
			slot = k
			break
		}
	}
	if slot == v.prefixNext {
		v.prefixNext = (v.prefixNext + 1) % prefixSlots
	}
	v.prefix[slot] = prefixCache{path: p[:i], dir: dir, gen: v.fs.treeGen}
}

// walkPath resolves p from cur (from the root if p is absolute). With
// remember, the walk updates the view's prefix cache (only walks from the
// root may).
func (v *view) walkPath(cur *inode, p string, follow bool, hops *int, remember bool) (*inode, string, *inode, syscall.Errno) {
	if p == "" {
		return nil, "", nil, syscall.ENOENT
	}
	if len(p) >= pathMax {
		return nil, "", nil, syscall.ENAMETOOLONG
	}
	if p[0] == '/' {
		cur = v.fs.root
	}
	return v.walk(cur, p, 0, follow, hops, remember)
}

// walk resolves p[i:] from cur, which the walk of p[:i] reached.
func (v *view) walk(cur *inode, p string, i int, follow bool, hops *int, remember bool) (*inode, string, *inode, syscall.Errno) {
	for {
		for i < len(p) && p[i] == '/' {
			i++
		}
		if i == len(p) {
			// The path ended at a directory: "/" or a trailing slash.
			return cur, "", cur, 0
		}
		j := len(p)
		if slash := strings.IndexByte(p[i:], '/'); slash >= 0 {
			j = i + slash
		}
		comp := p[i:j]
		k := j
		for k < len(p) && p[k] == '/' {
			k++
		}
		last := k == len(p)
		if last && remember && i > 0 && *hops == 0 && cur.isDir() {
			v.rememberPrefix(p, i, cur)
		}
		if !cur.isDir() {
			return nil, "", nil, syscall.ENOTDIR
		}
		if !v.may(cur, mayExec) {
			return nil, "", nil, syscall.EACCES
		}
		var child *inode
		switch comp {
		case ".":
			child = cur
		case "..":
			child = cur.parent
		default:
			if len(comp) > 255 {
				return nil, "", nil, syscall.ENAMETOOLONG
			}
			child = cur.entries[comp]
		}
		if child != nil && child.isSymlink() && (follow || !last) {
			*hops++
			if *hops > linksMax {
				return nil, "", nil, syscall.ELOOP
			}
			d, b, t, e := v.walkPath(cur, child.linkTarget(), true, hops, false)
			if last || e != 0 {
				if e == 0 && j < len(p) && t != nil && !t.isDir() {
					return nil, "", nil, syscall.ENOTDIR // "link/" to a file
				}
				return d, b, t, e
			}
			if t == nil {
				return nil, "", nil, syscall.ENOENT
			}
			child = t
		}
		if last {
			if child != nil && j < len(p) && !child.isDir() {
				return nil, "", nil, syscall.ENOTDIR // "file/"
			}
			return cur, comp, child, 0
		}
		if child == nil {
			return nil, "", nil, syscall.ENOENT
		}
		cur = child
		i = k
	}
}

// special reports whether base cannot be created, removed or renamed: the
// root itself, "." or "..".
func special(base string) bool {
	return base == "" || base == "." || base == ".."
}

// isAncestor reports whether a is d or one of d's ancestors (volatile tree).
func isAncestor(a, d *inode) bool {
	for steps := 0; ; steps++ {
		if d == a {
			return true
		}
		if d.parent == d || d.parent == nil {
			return false
		}
		if steps > 1<<20 {
			panic("simfs: directory parent chain does not reach the root")
		}
		d = d.parent
	}
}
