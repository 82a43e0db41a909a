// mooring-helm renders a chart the way `helm template` does, with Helm's own code: the chart
// loader, values merging (strvals), dependency processing, values.schema.json validation, the
// engine (text/template, sprig, tpl, include, required, lookup, subcharts, globals, library
// charts) and the manifest sorter. The glue between those calls is pkg/action's Install in
// client-only dry-run mode and cmd/helm/template.go's output loop, copied (see install below),
// so the stream is byte for byte what `helm template` v3.22.0 prints.
//
// It is built for GOOS=wasip1 (bin/mooring-helm.wasm) and run inside Node's WASI with only the
// chart directory preopened (shared/helm); see docs/decisions.md. It reads one JSON request on
// stdin and writes the manifests to stdout. On failure it writes "Error: <Helm's message>" as
// the last line of stderr and exits 1. It reads no environment and opens nothing but the chart.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/pkg/errors"
	"sigs.k8s.io/yaml"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
	"helm.sh/helm/v3/pkg/strvals"
)

// request is what stdin carries. Values are YAML documents (their text, not paths: the
// renderer can open nothing but the chart), merged in order like `helm template -f a -f b`.
type request struct {
	Chart                string   `json:"chart"`
	ReleaseName          string   `json:"releaseName"`
	Namespace            string   `json:"namespace"`
	Values               []string `json:"values"`
	SetJSON              []string `json:"setJSON"`
	Set                  []string `json:"set"`
	SetString            []string `json:"setString"`
	SetLiteral           []string `json:"setLiteral"`
	KubeVersion          string   `json:"kubeVersion"`
	APIVersions          []string `json:"apiVersions"`
	IncludeCRDs          bool     `json:"includeCrds"`
	IsUpgrade            bool     `json:"isUpgrade"`
	SkipTests            bool     `json:"skipTests"`
	SkipSchemaValidation bool     `json:"skipSchemaValidation"`
	DisableHooks         bool     `json:"disableHooks"`
	// MemoryLimit, when set, is the Go runtime's soft limit (debug.SetMemoryLimit): the GC works
	// harder near it, so a chart that fits is not stopped by the sandbox's hard cap on garbage.
	MemoryLimit int64 `json:"memoryLimit"`
	// Probe, for the sandbox tests: instead of rendering, print what the process was given
	// (its environment, arguments and working directory) as JSON.
	Probe bool `json:"probe"`
}

func main() {
	out, err := run(os.Stdin)
	if err != nil {
		fmt.Fprintf(os.Stderr, "Error: %s\n", err)
		os.Exit(1)
	}
	os.Stdout.Write(out)
}

func run(in io.Reader) ([]byte, error) {
	var req request
	dec := json.NewDecoder(in)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return nil, fmt.Errorf("mooring-helm: bad request: %w", err)
	}
	if req.MemoryLimit > 0 {
		debug.SetMemoryLimit(req.MemoryLimit)
	}
	if req.Probe {
		wd, err := os.Getwd()
		if err != nil {
			wd = "error: " + err.Error()
		}
		return json.Marshal(map[string]interface{}{"environ": os.Environ(), "args": os.Args, "wd": wd})
	}
	if req.Chart == "" {
		return nil, errors.New("mooring-helm: bad request: no chart")
	}
	if req.ReleaseName == "" {
		req.ReleaseName = "release-name"
	}
	if req.Namespace == "" {
		req.Namespace = "default"
	}

	vals, err := mergeValues(&req)
	if err != nil {
		return nil, err
	}

	// cmd/helm/install.go runInstall, without the parts that reach a repository or a cluster.
	chrt, err := loader.Load(req.Chart)
	if err != nil {
		return nil, err
	}
	switch chrt.Metadata.Type {
	case "", "application":
	default:
		return nil, errors.Errorf("%s charts are not installable", chrt.Metadata.Type)
	}
	if deps := chrt.Metadata.Dependencies; deps != nil {
		if err := checkDependencies(chrt, deps); err != nil {
			return nil, errors.Wrap(err, "An error occurred while checking for chart dependencies. You may need to run `helm dependency build` to fetch missing dependencies")
		}
	}

	var kubeVersion *chartutil.KubeVersion
	if req.KubeVersion != "" {
		kv, err := chartutil.ParseKubeVersion(req.KubeVersion)
		if err != nil {
			return nil, fmt.Errorf("invalid kube version '%s': %s", req.KubeVersion, err)
		}
		kubeVersion = kv
	}
	manifest, hooks, err := install(chrt, vals, &req, kubeVersion)
	if err != nil {
		return nil, err
	}

	// cmd/helm/template.go newTemplateCmd's output, without --output-dir and --show-only.
	var manifests bytes.Buffer
	fmt.Fprintln(&manifests, strings.TrimSpace(manifest))
	if !req.DisableHooks {
		for _, m := range hooks {
			if req.SkipTests && isTestHook(m) {
				continue
			}
			fmt.Fprintf(&manifests, "---\n# Source: %s\n%s\n", m.Path, m.Manifest)
		}
	}
	return manifests.Bytes(), nil
}

// install is pkg/action Install.RunWithContext as `helm template` runs it (DryRun, ClientOnly,
// Replace; no post-renderer, no output dir, no DNS), down to the release's manifest and hooks,
// with Configuration.renderResources inlined. pkg/action itself cannot be used: it pulls in
// k8s.io/cli-runtime's printers and github.com/moby/term, which do not build for wasip1. Every
// step calls the same Helm function pkg/action calls; the tests compare the output with helm's.
func install(chrt *chart.Chart, vals map[string]interface{}, req *request, kubeVersion *chartutil.KubeVersion) (string, []*release.Hook, error) {
	// Install.availableName (a dry run stops after the name check).
	if err := chartutil.ValidateReleaseName(req.ReleaseName); err != nil {
		return "", nil, errors.Wrapf(err, "release name %q", req.ReleaseName)
	}
	if err := chartutil.ProcessDependenciesWithMerge(chrt, vals); err != nil {
		return "", nil, err
	}
	// ClientOnly: the default capabilities, with --kube-version and --api-versions.
	caps := chartutil.DefaultCapabilities.Copy()
	if kubeVersion != nil {
		caps.KubeVersion = *kubeVersion
	}
	caps.APIVersions = append(caps.APIVersions, req.APIVersions...)
	isUpgrade := req.IsUpgrade // && isDryRun, which `helm template` always is
	options := chartutil.ReleaseOptions{
		Name:      req.ReleaseName,
		Namespace: req.Namespace,
		Revision:  1,
		IsInstall: !isUpgrade,
		IsUpgrade: isUpgrade,
	}
	valuesToRender, err := chartutil.ToRenderValuesWithSchemaValidation(chrt, vals, options, caps, req.SkipSchemaValidation)
	if err != nil {
		return "", nil, err
	}

	// Configuration.renderResources.
	if chrt.Metadata.KubeVersion != "" {
		if !chartutil.IsCompatibleRange(chrt.Metadata.KubeVersion, caps.KubeVersion.String()) {
			return "", nil, errors.Errorf("chart requires kubeVersion: %s which is incompatible with Kubernetes %s", chrt.Metadata.KubeVersion, caps.KubeVersion.String())
		}
	}
	var e engine.Engine // no REST config: lookup returns empty results, as in `helm template`
	files, err := e.Render(chrt, valuesToRender)
	if err != nil {
		return "", nil, err
	}
	// NOTES.txt is not a manifest; `helm template` prints no notes.
	for k := range files {
		if strings.HasSuffix(k, notesFileSuffix) {
			delete(files, k)
		}
	}
	hooks, manifests, err := releaseutil.SortManifests(files, nil, releaseutil.InstallOrder)
	if err != nil {
		return "", nil, err
	}
	var b bytes.Buffer
	if req.IncludeCRDs {
		for _, crd := range chrt.CRDObjects() {
			fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", crd.Filename, string(crd.File.Data[:]))
		}
	}
	for _, m := range manifests {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", m.Name, m.Content)
	}
	return b.String(), hooks, nil
}

const notesFileSuffix = "NOTES.txt"

// checkDependencies is pkg/action CheckDependencies.
func checkDependencies(ch *chart.Chart, reqs []*chart.Dependency) error {
	var missing []string

OUTER:
	for _, r := range reqs {
		for _, d := range ch.Dependencies() {
			if d.Name() == r.Name {
				continue OUTER
			}
		}
		missing = append(missing, r.Name)
	}

	if len(missing) > 0 {
		return errors.Errorf("found in Chart.yaml, but missing in charts/ directory: %s", strings.Join(missing, ", "))
	}
	return nil
}

// mergeValues is pkg/cli/values Options.MergeValues with the documents given inline.
func mergeValues(req *request) (map[string]interface{}, error) {
	base := map[string]interface{}{}
	for i, doc := range req.Values {
		current := map[string]interface{}{}
		if err := yaml.Unmarshal([]byte(doc), &current); err != nil {
			return nil, errors.Wrapf(err, "failed to parse values document %d", i+1)
		}
		base = mergeMaps(base, current)
	}
	for _, v := range req.SetJSON {
		if err := strvals.ParseJSON(v, base); err != nil {
			return nil, errors.Errorf("failed parsing --set-json data %s", v)
		}
	}
	for _, v := range req.Set {
		if err := strvals.ParseInto(v, base); err != nil {
			return nil, errors.Wrap(err, "failed parsing --set data")
		}
	}
	for _, v := range req.SetString {
		if err := strvals.ParseIntoString(v, base); err != nil {
			return nil, errors.Wrap(err, "failed parsing --set-string data")
		}
	}
	for _, v := range req.SetLiteral {
		if err := strvals.ParseLiteralInto(v, base); err != nil {
			return nil, errors.Wrap(err, "failed parsing --set-literal data")
		}
	}
	return base, nil
}

// mergeMaps is pkg/cli/values mergeMaps (unexported there).
func mergeMaps(a, b map[string]interface{}) map[string]interface{} {
	out := make(map[string]interface{}, len(a))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if v, ok := v.(map[string]interface{}); ok {
			if bv, ok := out[k]; ok {
				if bv, ok := bv.(map[string]interface{}); ok {
					out[k] = mergeMaps(bv, v)
					continue
				}
			}
		}
		out[k] = v
	}
	return out
}

func isTestHook(h *release.Hook) bool {
	for _, e := range h.Events {
		if e == release.HookTest {
			return true
		}
	}
	return false
}
