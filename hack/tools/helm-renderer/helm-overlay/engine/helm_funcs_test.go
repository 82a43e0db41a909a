package engine

// Helm v3.22.0's toYAML and fromYAML (pkg/engine/funcs.go), copied for the tests only:
// hack/lib/build-helm.sh refuses to build the renderer if those bodies change.

import (
	"strings"

	"sigs.k8s.io/yaml"
)

func toYAML(v interface{}) string {
	data, err := yaml.Marshal(v)
	if err != nil {
		// Swallow errors inside of a template.
		return ""
	}
	return strings.TrimSuffix(string(data), "\n")
}

func fromYAML(str string) map[string]interface{} {
	m := map[string]interface{}{}

	if err := yaml.Unmarshal([]byte(str), &m); err != nil {
		m["Error"] = err.Error()
	}
	return m
}
