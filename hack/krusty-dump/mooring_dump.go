// Copyright 2026 The Mooring authors. Apache-2.0, like the package it is copied into.
//
// Copied by hack/gen-krusty-cases.ts into a scratch copy of sigs.k8s.io/kustomize/api (package
// krusty), next to a kustomizer.go whose Run was renamed mooringRun. It is not built as part of
// Mooring. When MOORING_KRUSTY_DUMP names a directory, every Kustomizer.Run call that a test in
// api/krusty/*_test.go makes writes one case there:
//
//	<dir>/<n>/meta.json           test file, test name, the path Run got, which fs, the options
//	<dir>/<n>/input/...           every file of the fs at the moment of the call
//	<dir>/<n>/expected.yaml       what Run returned (ResMap.AsYaml), or
//	<dir>/<n>/expected-error.txt  the error it returned
//
// and every AssertActualEqualsExpected* of the kusttest harness on a ResMap that Run returned
// writes <dir>/<n>/asserted.json (whether the test's literal expectation matched, and whether
// it went through a tweak function first).

package krusty

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

var (
	mooringMu       sync.Mutex
	mooringSeq      int
	mooringCases    = map[resmap.ResMap]string{}
	mooringTestName string
)

// MooringSetTestName records the name of the running test (the harness calls it; the krusty
// tests never run in parallel).
func MooringSetTestName(name string) {
	mooringMu.Lock()
	defer mooringMu.Unlock()
	mooringTestName = name
}

// Run wraps the real Run (renamed mooringRun) and dumps the call.
func (b *Kustomizer) Run(fSys filesys.FileSystem, path string) (resmap.ResMap, error) {
	m, err := b.mooringRun(fSys, path)
	if dir := os.Getenv("MOORING_KRUSTY_DUMP"); dir != "" {
		if dumpErr := mooringDump(dir, fSys, path, b.options, m, err); dumpErr != nil {
			fmt.Fprintf(os.Stderr, "MOORING-DUMP-FAILED: %v\n", dumpErr)
		}
	}
	return m, err
}

// mooringCaller finds the outermost frame in a krusty *_test.go file: its file and function.
func mooringCaller() (file, fn string) {
	pcs := make([]uintptr, 64)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if strings.HasSuffix(f.File, "_test.go") && filepath.Base(filepath.Dir(f.File)) == "krusty" {
			file = filepath.Base(f.File)
			fn = f.Function
			if i := strings.LastIndex(fn, "krusty_test."); i >= 0 {
				fn = fn[i+len("krusty_test."):]
			}
			if i := strings.Index(fn, "."); i >= 0 {
				fn = fn[:i]
			}
		}
		if !more {
			break
		}
	}
	return file, fn
}

type mooringPluginConfig struct {
	PluginRestrictions string `json:"pluginRestrictions"`
	BpLoadingOptions   string `json:"bpLoadingOptions"`
	FnExec             bool   `json:"fnExec"`
	FnNetwork          bool   `json:"fnNetwork"`
	FnMounts           int    `json:"fnMounts"`
	HelmEnabled        bool   `json:"helmEnabled"`
	HelmCommand        string `json:"helmCommand,omitempty"`
}

type mooringMeta struct {
	File     string `json:"file"`
	Test     string `json:"test"`
	TestFunc string `json:"testFunc"`
	Seq      int    `json:"seq"`
	// Path is what Run got; Entry is it relative to the dumped input/ ("" when outside it).
	Path              string              `json:"path"`
	Entry             string              `json:"entry"`
	Fs                string              `json:"fs"`
	FsRoot            string              `json:"fsRoot"`
	Reorder           string              `json:"reorder"`
	AddManagedbyLabel bool                `json:"addManagedbyLabel"`
	LoadRestrictions  string              `json:"loadRestrictions"`
	Plugins           mooringPluginConfig `json:"plugins"`
	Error             bool                `json:"error"`
	// AsYamlError: Run succeeded, ResMap.AsYaml failed (the error file holds its message).
	AsYamlError bool `json:"asYamlError,omitempty"`
}

func mooringDump(dir string, fSys filesys.FileSystem, path string, o *Options,
	m resmap.ResMap, runErr error) error {
	file, fn := mooringCaller()
	mooringMu.Lock()
	mooringSeq++
	seq := mooringSeq
	test := mooringTestName
	if test == "" || strings.SplitN(test, "/", 2)[0] != fn {
		test = fn
	}
	if m != nil {
		mooringCases[m] = fmt.Sprint(seq)
	}
	mooringMu.Unlock()

	caseDir := filepath.Join(dir, fmt.Sprint(seq))
	input := filepath.Join(caseDir, "input")
	if err := os.MkdirAll(input, 0o755); err != nil {
		return err
	}
	meta := mooringMeta{
		File: file, Test: test, TestFunc: fn, Seq: seq, Path: path,
		Reorder:           string(o.Reorder),
		AddManagedbyLabel: o.AddManagedbyLabel,
		LoadRestrictions:  o.LoadRestrictions.String(),
		Error:             runErr != nil,
	}
	if pc := o.PluginConfig; pc != nil {
		meta.Plugins = mooringPluginConfig{
			PluginRestrictions: pc.PluginRestrictions.String(),
			BpLoadingOptions:   pc.BpLoadingOptions.String(),
			FnExec:             pc.FnpLoadingOptions.EnableExec,
			FnNetwork:          pc.FnpLoadingOptions.Network,
			FnMounts:           len(pc.FnpLoadingOptions.Mounts),
			HelmEnabled:        pc.HelmConfig.Enabled,
			HelmCommand:        pc.HelmConfig.Command,
		}
	}
	root := string(filepath.Separator)
	meta.Fs = "memory"
	if strings.Contains(fmt.Sprintf("%T", fSys), "fsOnDisk") {
		meta.Fs = "disk"
		// The tests' on-disk trees live in a fresh directory under the temp dir.
		tmp, _ := filepath.EvalSymlinks(os.TempDir())
		abs, _ := filepath.Abs(path)
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			real = abs
		}
		if rel, err := filepath.Rel(tmp, real); err == nil && !strings.HasPrefix(rel, "..") && rel != "." {
			root = filepath.Join(tmp, strings.SplitN(rel, string(filepath.Separator), 2)[0])
			path = real
		} else {
			root = ""
		}
	}
	meta.FsRoot = root
	if root != "" {
		abs := path
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(root, abs)
		}
		if rel, err := filepath.Rel(root, abs); err == nil && !strings.HasPrefix(rel, "..") {
			meta.Entry = filepath.ToSlash(rel)
		}
		walkErr := fSys.Walk(root, func(p string, info os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			target := filepath.Join(input, rel)
			if info.IsDir() {
				return os.MkdirAll(target, 0o755)
			}
			data, err := fSys.ReadFile(p)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			return os.WriteFile(target, data, 0o644)
		})
		if walkErr != nil {
			return walkErr
		}
	}
	if runErr != nil {
		if err := os.WriteFile(filepath.Join(caseDir, "expected-error.txt"), []byte(runErr.Error()+"\n"), 0o644); err != nil {
			return err
		}
	} else if y, err := m.AsYaml(); err != nil {
		// Run succeeded but the result cannot be printed: `kustomize build` fails at output.
		meta.Error = true
		meta.AsYamlError = true
		if err := os.WriteFile(filepath.Join(caseDir, "expected-error.txt"), []byte(err.Error()+"\n"), 0o644); err != nil {
			return err
		}
	} else if err := os.WriteFile(filepath.Join(caseDir, "expected.yaml"), y, 0o644); err != nil {
		return err
	}
	data, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(caseDir, "meta.json"), data, 0o644)
}

// MooringNoteAssert records that the harness compared a Run result with a test's expectation.
func MooringNoteAssert(m resmap.ResMap, tweaked bool, equal bool) {
	dir := os.Getenv("MOORING_KRUSTY_DUMP")
	if dir == "" || m == nil {
		return
	}
	mooringMu.Lock()
	id, ok := mooringCases[m]
	mooringMu.Unlock()
	if !ok {
		return
	}
	data, _ := json.Marshal(map[string]bool{"tweaked": tweaked, "equal": equal})
	_ = os.WriteFile(filepath.Join(dir, id, "asserted.json"), data, 0o644)
}
