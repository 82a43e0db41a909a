// mooring-helm renders a chart the way `helm template` does, with Helm's own code: the chart
// loader, values merging (strvals), dependency processing, values.schema.json validation, the
// engine (text/template, sprig, tpl, include, required, lookup, subcharts, globals, library
// charts) and the manifest sorter. The glue between those calls is pkg/action's Install in
// client-only dry-run mode and cmd/helm/template.go's output loop, copied (see install below),
// so the stream is byte for byte what `helm template` v3.22.0 prints.
//
// It is built for GOOS=wasip1 with -buildmode=c-shared (bin/mooring-helm.wasm), a reactor: the
// host runs _initialize once (the Go runtime and Helm's package init), then renders many charts
// through the exports below, one call each, inside Node's WASI with only the chart directory
// handed over in memory (shared/helm; see docs/decisions.md). It reads no environment and opens
// nothing. Between calls no goroutine runs: Go's wasm scheduler has one thread and runs only
// inside an export.
//
// One render: the host asks mooring_request for a buffer of n bytes, writes the request there
// (the JSON's length as a little-endian uint32, the JSON, then the bytes of the chart's files),
// calls mooring_render, which returns the result's length, reads it at mooring_result (one
// status byte, then the manifests or Helm's message), and calls mooring_release, which drops the
// result and collects garbage so the next render starts from a small heap. The chart arrives in
// the request (chart_files.go), so a pooled renderer has no directory at all; a request that
// names a path instead loads it from the preopened directory (the sandbox tests' one-off runs).
// A chart the host names by digest is kept between renders and copied for each (chart_cache.go).
package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"unsafe"

	"github.com/pkg/errors"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
	"helm.sh/helm/v3/pkg/strvals"
)

// request is what the host writes at mooring_request. Values are YAML documents (their text,
// not paths: the renderer can open nothing but the chart), merged in order like
// `helm template -f a -f b`.
type request struct {
	// Chart: the chart's directory. With ChartFiles it only names the chart in Helm's messages
	// (as `helm template <dir>` names it); without, the guest loads it from its file system.
	Chart      string       `json:"chart"`
	ChartFiles []chartEntry `json:"chartFiles"`
	// ChartDigest names the chart in this renderer's cache (chart_cache.go): with ChartFiles, keep
	// the chart under it; alone, render the one kept.
	ChartDigest string `json:"chartDigest"`
	// ForgetCharts: digests to drop from the cache first.
	ForgetCharts []string `json:"forgetCharts"`
	ReleaseName  string   `json:"releaseName"`
	Namespace    string   `json:"namespace"`
	Values       []string `json:"values"`
	SetJSON      []string `json:"setJSON"`
	Set          []string `json:"set"`
	SetString    []string `json:"setString"`
	SetLiteral   []string `json:"setLiteral"`
	KubeVersion  string   `json:"kubeVersion"`
	APIVersions  []string `json:"apiVersions"`
	IncludeCRDs  bool     `json:"includeCrds"`
	IsUpgrade    bool     `json:"isUpgrade"`
	// Revision: .Release.Revision, the release version being made (a HelmRelease knows it from
	// the release history); 0 means 1, as `helm template` has it.
	Revision             int  `json:"revision"`
	SkipTests            bool `json:"skipTests"`
	SkipSchemaValidation bool `json:"skipSchemaValidation"`
	DisableHooks         bool `json:"disableHooks"`
	// Lookup: the host answers `lookup` (mooring.lookup below). Without it, lookup finds
	// nothing, as in `helm template`.
	Lookup bool `json:"lookup"`
	// MemoryLimit, when set, is the Go runtime's soft limit (debug.SetMemoryLimit): the GC works
	// harder near it, so a chart that fits is not stopped by the sandbox's hard cap on garbage.
	MemoryLimit int64 `json:"memoryLimit"`
	// Probe, for the sandbox tests: instead of rendering, print what the process was given
	// (its environment, arguments and working directory) as JSON.
	Probe bool `json:"probe"`
}

// The status byte in front of a result.
const (
	statusOK = 0
	// Helm refused the chart or its values; the rest is Helm's message.
	statusHelmError = 1
	// The renderer panicked outside Helm's own recovery; the host discards this instance.
	statusPanic = 2
	// The request named a chart by digest that is not cached here; the host sends it whole.
	statusChartNotCached = 3
)

var (
	requestBuf []byte
	resultBuf  []byte
)

// main is not run in a c-shared (reactor) build; the host calls the exports.
func main() {}

func init() {
	// The GC runs on the one thread, inside the render: collect less often than Go's default
	// (the soft limit each request sets still bounds the heap). Charts render up to a third
	// faster, in a few more MB.
	debug.SetGCPercent(400)
	// Helm logs warnings (coalesce, dependencies) that `helm template` prints on stderr and the
	// host never shows; a long-lived instance must not accumulate them.
	log.SetOutput(io.Discard)
}

// mooring_request returns the address of a fresh n-byte buffer for the next request.
//
//go:wasmexport mooring_request
func requestBuffer(n int32) unsafe.Pointer {
	requestBuf = make([]byte, max(n, 1))[:n]
	return unsafe.Pointer(unsafe.SliceData(requestBuf[:cap(requestBuf)]))
}

// mooring_render renders the request in the buffer and returns the result's length.
//
//go:wasmexport mooring_render
func render() int32 {
	status, out := renderGuarded(requestBuf)
	requestBuf = nil
	resultBuf = append(append(make([]byte, 0, len(out)+1), status), out...)
	return int32(len(resultBuf))
}

// mooring_result returns the address of the last result.
//
//go:wasmexport mooring_result
func resultAddress() unsafe.Pointer {
	return unsafe.Pointer(unsafe.SliceData(resultBuf))
}

// mooring_release drops the last result and collects garbage while the host is not waiting.
//
//go:wasmexport mooring_release
func releaseResult() {
	resultBuf = nil
	runtime.GC()
}

func renderGuarded(in []byte) (status byte, out []byte) {
	defer func() {
		if r := recover(); r != nil {
			status, out = statusPanic, []byte(fmt.Sprintf("mooring-helm panicked: %v", r))
		}
	}()
	out, err := run(in)
	if errors.Is(err, errChartNotCached) {
		return statusChartNotCached, []byte(err.Error())
	}
	if err != nil {
		return statusHelmError, []byte(err.Error())
	}
	return statusOK, out
}

func run(in []byte) ([]byte, error) {
	if len(in) < 4 || uint64(binary.LittleEndian.Uint32(in)) > uint64(len(in)-4) {
		return nil, errors.New("mooring-helm: bad request: no JSON length in front")
	}
	doc, chartData := in[4:4+binary.LittleEndian.Uint32(in)], in[4+binary.LittleEndian.Uint32(in):]
	var req request
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return nil, fmt.Errorf("mooring-helm: bad request: %w", err)
	}
	for _, digest := range req.ForgetCharts {
		delete(chartCache, digest)
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
	if req.Chart == "" && req.ChartFiles == nil && req.ChartDigest == "" {
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
	var chrt *chart.Chart
	switch {
	case req.ChartFiles != nil:
		chrt, err = loadChartFiles(req.Chart, req.ChartFiles, chartData)
		if err == nil && req.ChartDigest != "" {
			chartCache[req.ChartDigest] = chrt
			chrt = cloneChart(chrt)
		}
	case req.ChartDigest != "":
		kept, ok := chartCache[req.ChartDigest]
		if !ok {
			return nil, errChartNotCached
		}
		chrt = cloneChart(kept)
	default:
		chrt, err = loader.Load(req.Chart)
	}
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
	revision := req.Revision
	if revision < 1 {
		revision = 1
	}
	options := chartutil.ReleaseOptions{
		Name:      req.ReleaseName,
		Namespace: req.Namespace,
		Revision:  revision,
		IsInstall: !isUpgrade,
		IsUpgrade: isUpgrade,
	}
	// Helm's own validation comes right after CoalesceValues, the last step; it runs here instead,
	// the same code with the compiled schema kept (schema_cache.go).
	valuesToRender, err := chartutil.ToRenderValuesWithSchemaValidation(chrt, vals, options, caps, true)
	if err != nil {
		return "", nil, err
	}
	if !req.SkipSchemaValidation {
		if err := validateAgainstSchema(chrt, valuesToRender["Values"].(chartutil.Values)); err != nil {
			errFmt := "values don't meet the specifications of the schema(s) in the following chart(s):\n%s"
			return "", nil, fmt.Errorf(errFmt, err.Error())
		}
	}

	// Configuration.renderResources.
	if chrt.Metadata.KubeVersion != "" {
		if !chartutil.IsCompatibleRange(chrt.Metadata.KubeVersion, caps.KubeVersion.String()) {
			return "", nil, errors.Errorf("chart requires kubeVersion: %s which is incompatible with Kubernetes %s", chrt.Metadata.KubeVersion, caps.KubeVersion.String())
		}
	}
	var files map[string]string
	if req.Lookup {
		files, err = engine.RenderWithClientProvider(chrt, valuesToRender, hostClients{})
	} else {
		var e engine.Engine // no client: lookup returns empty results, as in `helm template`
		files, err = e.Render(chrt, valuesToRender)
	}
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

// hostLookup asks the host for one object (name set) or a list (name empty) as JSON. It returns
// the answer's length (the answer is "null" when nothing is found), or minus the length of an
// error message; either waits at mooring.lookup_answer.
//
//go:wasmimport mooring lookup
func hostLookup(req unsafe.Pointer, reqLen int32) int32

// hostLookupAnswer copies the pending answer to buf, which holds its length.
//
//go:wasmimport mooring lookup_answer
func hostLookupAnswer(buf unsafe.Pointer)

// hostClients is the engine's ClientProvider: every client asks the host, which answers from
// the target cluster with the caller's own credentials. Namespaced is claimed for every kind;
// the host ignores the namespace of a cluster-scoped kind, as the API server's path does.
type hostClients struct{}

func (hostClients) GetClientFor(apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error) {
	return hostResource{apiVersion: apiVersion, kind: kind}, true, nil
}

// hostResource implements the Get and List that Helm's lookup calls; any other method of the
// embedded (nil) interface would panic, and nothing calls them.
type hostResource struct {
	dynamic.NamespaceableResourceInterface
	apiVersion, kind, namespace string
}

func (r hostResource) Namespace(ns string) dynamic.ResourceInterface {
	r.namespace = ns
	return r
}

func (r hostResource) ask(name string) (map[string]interface{}, error) {
	q, err := json.Marshal(map[string]string{"apiVersion": r.apiVersion, "kind": r.kind, "namespace": r.namespace, "name": name})
	if err != nil {
		return nil, err
	}
	n := hostLookup(unsafe.Pointer(unsafe.SliceData(q)), int32(len(q)))
	runtime.KeepAlive(q)
	size := n
	if size < 0 {
		size = -size
	}
	answer := make([]byte, max(size, 1))[:size]
	hostLookupAnswer(unsafe.Pointer(unsafe.SliceData(answer[:cap(answer)])))
	if n < 0 {
		return nil, errors.New(string(answer))
	}
	var obj map[string]interface{}
	// utiljson decodes integers as int64, as client-go's unstructured decoder does.
	if err := utiljson.Unmarshal(answer, &obj); err != nil {
		return nil, fmt.Errorf("lookup %s %s: the host's answer is not a JSON object: %w", r.apiVersion, r.kind, err)
	}
	if obj == nil {
		gv, _ := schema.ParseGroupVersion(r.apiVersion)
		return nil, apierrors.NewNotFound(gv.WithResource(strings.ToLower(r.kind)).GroupResource(), name)
	}
	return obj, nil
}

func (r hostResource) Get(_ context.Context, name string, _ metav1.GetOptions, _ ...string) (*unstructured.Unstructured, error) {
	obj, err := r.ask(name)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: obj}, nil
}

func (r hostResource) List(_ context.Context, _ metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	obj, err := r.ask("")
	if err != nil {
		return nil, err
	}
	list := &unstructured.UnstructuredList{}
	list.SetUnstructuredContent(obj)
	return list, nil
}
