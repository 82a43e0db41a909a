package main

// The chart as the host hands it over: not a directory the guest opens, but the entries of one
// (read by shared/helm/src/chart-files.ts, which follows links inside the chart and refuses those
// that leave it) with the files' bytes after the request. loadChartFiles turns them into a chart
// the way loader.LoadDir turns a directory into one, rule for rule, so `helm template <dir>` and
// this render see the same chart: the top .helmignore and Helm's default rule, a directory the
// rules match skipped whole, each directory walked in byte order (internal/sympath), an irregular
// or oversized file refused unless ignored, a UTF-8 byte order mark dropped; then loader.LoadFiles.

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/ignore"
)

// chartEntry is one file or directory of the chart, named by its slash-separated path inside it
// (a link by its own path, with its target's type and size, as sympath walks it).
type chartEntry struct {
	Name string `json:"name"`
	// Type: "file", "dir", or "other" (a socket, a device: what Helm calls irregular).
	Type string `json:"type"`
	// Size: a file's size. Its bytes follow the request, in entry order, unless Unread.
	Size int64 `json:"size"`
	// Unread: a file above Helm's size limit, which the host did not read.
	Unread bool `json:"unread,omitempty"`
	// Target: a link's target's own name, which Helm's size message gives instead of the link's.
	Target string `json:"target,omitempty"`
}

type chartNode struct {
	entry    chartEntry
	data     []byte
	children []string
}

// loadChartFiles is loader.LoadDir(root) over the host's entries; data holds the files' bytes.
func loadChartFiles(root string, entries []chartEntry, data []byte) (*chart.Chart, error) {
	nodes := map[string]*chartNode{"": {entry: chartEntry{Type: "dir"}}}
	for _, e := range entries {
		if e.Name == "" || path.Clean(e.Name) != e.Name || strings.HasPrefix(e.Name, "../") || path.IsAbs(e.Name) {
			return nil, fmt.Errorf("mooring-helm: bad request: chart entry %q", e.Name)
		}
		if _, dup := nodes[e.Name]; dup {
			return nil, fmt.Errorf("mooring-helm: bad request: chart entry %q twice", e.Name)
		}
		n := &chartNode{entry: e}
		if e.Type == "file" && !e.Unread {
			if e.Size < 0 || e.Size > int64(len(data)) {
				return nil, fmt.Errorf("mooring-helm: bad request: chart entry %q runs past the data", e.Name)
			}
			n.data, data = data[:e.Size:e.Size], data[e.Size:]
		}
		nodes[e.Name] = n
	}
	for name := range nodes {
		if name == "" {
			continue
		}
		parent, ok := nodes[dirOf(name)]
		if !ok || parent.entry.Type != "dir" {
			return nil, fmt.Errorf("mooring-helm: bad request: chart entry %q has no directory", name)
		}
		parent.children = append(parent.children, name)
	}

	// Just used for errors, as in LoadDir.
	c := &chart.Chart{}
	topdir := strings.TrimSuffix(root, "/") + "/"
	rules := ignore.Empty()
	if n, ok := nodes[ignore.HelmIgnore]; ok {
		// LoadDir parses whatever os.Stat finds there; only a regular file can be read.
		if n.entry.Type != "file" || n.entry.Unread {
			return c, fmt.Errorf("read %s: cannot read .helmignore: it is not a regular file of at most %d bytes", topdir+ignore.HelmIgnore, loader.MaxDecompressedFileSize)
		}
		r, err := ignore.Parse(strings.NewReader(string(n.data)))
		if err != nil {
			return c, err
		}
		rules = r
	}
	rules.AddDefaults()

	var files []*loader.BufferedFile
	var walk func(dir string) error
	walk = func(dir string) error {
		children := nodes[dir].children
		// sympath reads each directory's names sorted (sort.Strings: by bytes).
		sort.Slice(children, func(i, j int) bool { return baseOf(children[i]) < baseOf(children[j]) })
		for _, name := range children {
			n := nodes[name]
			fi := entryInfo{name: baseOf(name), entry: n.entry}
			if n.entry.Type == "dir" {
				if rules.Ignore(name, fi) {
					continue
				}
				if err := walk(name); err != nil {
					return err
				}
				continue
			}
			if rules.Ignore(name, fi) {
				continue
			}
			if n.entry.Type != "file" {
				return fmt.Errorf("cannot load irregular file %s as it has file mode type bits set", topdir+name)
			}
			if n.entry.Size > loader.MaxDecompressedFileSize {
				shown := n.entry.Target
				if shown == "" {
					shown = fi.name
				}
				return fmt.Errorf("chart file %q is larger than the maximum file size %d", shown, loader.MaxDecompressedFileSize)
			}
			if n.entry.Unread {
				return fmt.Errorf("mooring-helm: bad request: chart file %q was not sent", name)
			}
			files = append(files, &loader.BufferedFile{Name: name, Data: trimBOM(n.data)})
		}
		return nil
	}
	if err := walk(""); err != nil {
		return c, err
	}
	return loader.LoadFiles(files)
}

func dirOf(name string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		return name[:i]
	}
	return ""
}

func baseOf(name string) string { return name[strings.LastIndexByte(name, '/')+1:] }

func trimBOM(b []byte) []byte {
	if len(b) >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF {
		return b[3:]
	}
	return b
}

// entryInfo is the os.FileInfo Helm's ignore rules are asked about (they look at IsDir only).
type entryInfo struct {
	name  string
	entry chartEntry
}

func (i entryInfo) Name() string       { return i.name }
func (i entryInfo) Size() int64        { return i.entry.Size }
func (i entryInfo) ModTime() time.Time { return time.Time{} }
func (i entryInfo) IsDir() bool        { return i.entry.Type == "dir" }
func (i entryInfo) Sys() any           { return nil }
func (i entryInfo) Mode() fs.FileMode {
	switch i.entry.Type {
	case "dir":
		return fs.ModeDir | 0o755
	case "file":
		return 0o644
	}
	return fs.ModeIrregular
}

var _ os.FileInfo = entryInfo{}
