// Package hostile holds the hostile on-disk corpus tests of the three lease
// engines. It has no production code: the tests in this directory load
// every state under the module's testdata/hostile/<engine>/<name>/state.txt,
// build it on the real OS (a t.TempDir through lease/osenv) and in simfs,
// run the named engine operation, and require a typed refusal whose message
// names the file and the problem, with nothing deleted or changed outside
// the documented quarantine. See testdata/hostile/README.md for the
// manifest language and docs/THREAT-MODEL.md for what the corpus defends.
package hostile
