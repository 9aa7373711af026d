package statecas

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/leasekit/leasekit/internal/statefile"
	"github.com/leasekit/leasekit/lease/leasetest"
)

// TestCommitActsOnlyOnTheComparedInode: between a compare (read through a
// handle) and its commit, the name is moved away and another record put in
// its place (a controller whose claim was moved aside by an orphan
// recovery meets a rival's record there; random seed 9181627). The commit
// must not write over, unlink or move that record: the handle's inode is
// not the name's any more. When the very inode the compare read is put
// back, the commit goes on.
func TestCommitActsOnlyOnTheComparedInode(t *testing.T) {
	judged, rival, next := []byte("{\"judged\":1}\n"), []byte("{\"rival\":1}\n"), []byte("{\"next\":1}\n")
	commits := map[string]func(env Env, f *fixture) (bool, error){
		"write": func(env Env, f *fixture) (bool, error) {
			return WriteIfUnchanged(env, f.target(), next, statefile.SHA256Hex(judged))
		},
		"remove": func(env Env, f *fixture) (bool, error) {
			return RemoveIfUnchanged(env, f.target(), statefile.SHA256Hex(judged))
		},
		"move": func(env Env, f *fixture) (bool, error) {
			return MoveIfUnchanged(env, f.target(), statefile.SHA256Hex(judged), filepath.Join(f.dir, "quarantined"))
		},
	}
	for _, op := range []string{"write", "remove", "move"} {
		for _, restoreSame := range []bool{false, true} {
			name := op + "/rival-in-place"
			if restoreSame {
				name = op + "/same-inode-restored"
			}
			t.Run(name, func(t *testing.T) {
				f := newFixture(t)
				must(t, os.WriteFile(f.target(), judged, 0o600))
				opened, swapped := false, false
				hooked := leasetest.NewHookFS(f.env.FS)
				hooked.Before(func(o leasetest.Op) error {
					if o.Name == "OpenFile" && o.Paths[0] == f.target() {
						opened = true
					}
					// The claim check right before the commit.
					if opened && !swapped && o.Name == "Lstat" && o.Paths[0] == ClaimPath(f.target()) {
						swapped = true
						away := filepath.Join(f.dir, "away")
						must(t, os.Rename(f.target(), away))
						if restoreSame {
							must(t, os.Rename(away, f.target()))
						} else {
							must(t, os.WriteFile(f.target(), rival, 0o600))
						}
					}
					return nil
				})
				env := f.env
				env.FS = hooked
				done, err := commits[op](env, f)
				if !swapped {
					t.Fatal("the hook never ran")
				}
				content, _ := os.ReadFile(f.target())
				if restoreSame {
					if err != nil || !done {
						t.Fatalf("same inode put back: want the commit, got %v %v", done, err)
					}
					return
				}
				if err != nil || done || string(content) != string(rival) {
					t.Fatalf("rival in place: want no commit and the rival kept, got done=%v err=%v content=%q", done, err, content)
				}
				if _, err := os.Lstat(ClaimPath(f.target())); !os.IsNotExist(err) {
					t.Fatalf("the mutation claim is left: %v", err)
				}
				for _, entry := range f.names() {
					if entry != "state.json" && entry != "away" && entry != "quarantined" {
						t.Fatalf("left behind: %q in %v", entry, f.names())
					}
				}
			})
		}
	}
}
