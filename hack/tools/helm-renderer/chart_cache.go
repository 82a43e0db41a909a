package main

// A renderer keeps the charts it loaded, by the digest the host names them with (sha256 of the
// chart's entries and bytes, shared/helm/src/chart-files.ts), so a warm render of a chart it has
// seen skips loading it: only values, dependencies and the template engine run. The host decides
// what is kept (a request names the charts to forget) within a budget of its own, and sends the
// chart again when told it is not here.
//
// Helm changes the chart it renders: ProcessDependenciesWithMerge drops disabled subcharts
// (SetDependencies), renames aliased ones, flags Metadata.Dependencies enabled and rewrites their
// ImportValues, and replaces Values with the imported ones. So the kept chart is never rendered;
// each render gets cloneChart's copy, which owns everything Helm writes to, down the whole tree.

import (
	"errors"

	"helm.sh/helm/v3/pkg/chart"
)

// errChartNotCached: the request names a chart by digest only, and this renderer does not have it.
var errChartNotCached = errors.New("mooring-helm: the chart is not cached here")

var chartCache = map[string]*chart.Chart{}

// cloneChart is a copy of c that a render may change without changing c: the chart, its
// metadata and each dependency entry, its values (maps and lists; scalars are immutable) and its
// subcharts are copied; the files, templates, schema and lock, which Helm only reads, are shared.
func cloneChart(c *chart.Chart) *chart.Chart {
	out := *c
	if c.Metadata != nil {
		md := *c.Metadata
		if c.Metadata.Dependencies != nil {
			md.Dependencies = make([]*chart.Dependency, len(c.Metadata.Dependencies))
			for i, d := range c.Metadata.Dependencies {
				if d != nil {
					dep := *d
					md.Dependencies[i] = &dep
				}
			}
		}
		out.Metadata = &md
	}
	if c.Values != nil {
		out.Values = cloneMap(c.Values)
	}
	deps := make([]*chart.Chart, 0, len(c.Dependencies()))
	for _, d := range c.Dependencies() {
		deps = append(deps, cloneChart(d))
	}
	// Sets each copy's parent to out, as the loader's AddDependency did for the originals.
	out.SetDependencies(deps...)
	return &out
}

func cloneMap(m map[string]interface{}) map[string]interface{} {
	out := make(map[string]interface{}, len(m))
	for k, v := range m {
		out[k] = cloneValue(v)
	}
	return out
}

func cloneValue(v interface{}) interface{} {
	switch v := v.(type) {
	case map[string]interface{}:
		return cloneMap(v)
	case []interface{}:
		out := make([]interface{}, len(v))
		for i, e := range v {
			out[i] = cloneValue(e)
		}
		return out
	}
	return v
}
