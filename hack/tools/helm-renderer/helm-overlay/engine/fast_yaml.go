// Copied into the renderer's copy of Helm's pkg/engine by hack/lib/build-helm.sh, which points
// the template functions toYaml and fromYaml here; not built into the renderer from this
// directory (its tests run here, against Helm's own two functions copied into helm_funcs_test.go).

package engine

import (
	"math"
	"strings"
	"unicode/utf8"

	yamlv2 "go.yaml.in/yaml/v2"
)

// Helm's toYaml is sigs.k8s.io/yaml's Marshal: json.Marshal, then yaml.v2 parses that JSON and
// prints what it parsed. fromYaml is its Unmarshal: yaml.v2 parses, the result goes to JSON and
// encoding/json decodes it again. Under WebAssembly the two reflective JSON passes and the
// second YAML parse are most of the time charts spend in these functions: kserve-resources
// merges its patches with a recursive template that calls both at every level.
//
// mooringToYAML and mooringFromYAML build the value the skipped passes would have produced
// directly, and fall back to Helm's own function for anything they do not handle exactly
// (non-string keys, numbers JSON would round, NaN and infinities, invalid UTF-8, other Go types,
// errors), so every input gives Helm's output byte for byte.

// maxFastDepth: deeper values take Helm's path, where yaml.v2 and encoding/json apply their own
// depth limits.
const maxFastDepth = 1000

// Integers up to 2^53 print the same from a float64 as from an int64; larger ones JSON prints in
// shortest form ("1152921504606847000" for 2^60), which yaml.v2 then reads back as another integer.
const exactIntegerLimit = 1 << 53

func mooringToYAML(v interface{}) string {
	if y, ok := yamlOfJSONValue(v, 0); ok {
		if data, err := yamlv2.Marshal(y); err == nil {
			return strings.TrimSuffix(string(data), "\n")
		}
	}
	return toYAML(v)
}

func mooringFromYAML(str string) map[string]interface{} {
	var y interface{}
	if err := yamlv2.Unmarshal([]byte(str), &y); err == nil {
		if ym, ok := y.(map[interface{}]interface{}); ok {
			if m, ok := jsonOfYAMLMap(ym, 0); ok {
				return m
			}
		}
	}
	return fromYAML(str)
}

// yamlOfJSONValue: what yaml.v2 decodes from json.Marshal(v), when that is certain.
func yamlOfJSONValue(v interface{}, depth int) (interface{}, bool) {
	if depth > maxFastDepth {
		return nil, false
	}
	switch v := v.(type) {
	case nil:
		return nil, true
	case string:
		return v, survivesJSONInYAML(v)
	case bool:
		return v, true
	case int:
		return int64(v), true
	case int64:
		return v, true
	case int32:
		return int64(v), true
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, false // json.Marshal fails: Helm prints ""
		}
		if v == math.Trunc(v) {
			// JSON prints an integral float without a point, and yaml.v2 reads it as an integer.
			if math.Abs(v) < exactIntegerLimit {
				return int64(v), true
			}
			return nil, false
		}
		return v, true // shortest form, read back to the same float
	case map[string]interface{}:
		if v == nil {
			return nil, true
		}
		out := make(map[interface{}]interface{}, len(v))
		for k, e := range v {
			if !survivesJSONInYAML(k) {
				return nil, false
			}
			ye, ok := yamlOfJSONValue(e, depth+1)
			if !ok {
				return nil, false
			}
			out[k] = ye
		}
		return out, true
	case []interface{}:
		if v == nil {
			return nil, true
		}
		return convertList(v, depth, yamlOfJSONValue)
	case []string:
		if v == nil {
			return nil, true
		}
		out := make([]interface{}, len(v))
		for i, e := range v {
			if !survivesJSONInYAML(e) {
				return nil, false
			}
			out[i] = e
		}
		return out, true
	}
	return nil, false
}

// survivesJSONInYAML: s comes back from yaml.v2 reading json.Marshal's quoted s unchanged. JSON
// escapes the C0 controls, quotes, backslashes, <>& and U+2028/9 but writes DEL, the C1 controls and
// U+FEFF, U+FFFE, U+FFFF as they are: yaml.v2 refuses most of them and reads U+0085 (NEL) as a line
// break; and json.Marshal replaces invalid UTF-8.
func survivesJSONInYAML(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x7F {
			return survivesJSONInYAMLSlow(s[i:])
		}
	}
	return true
}

func survivesJSONInYAMLSlow(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || (r >= 0x7F && r <= 0x9F) || r == 0xFEFF || r == 0xFFFE || r == 0xFFFF {
			return false // RuneError: invalid UTF-8, or a U+FFFD JSON would keep (rare; Helm's path is exact)
		}
	}
	return true
}

// jsonOfYAMLMap: what encoding/json decodes from the JSON sigs.k8s.io/yaml makes of m, when that
// is certain. Every map and list is new, as a decode makes them: templates change what they get.
func jsonOfYAMLMap(m map[interface{}]interface{}, depth int) (map[string]interface{}, bool) {
	out := make(map[string]interface{}, len(m))
	for k, e := range m {
		key, ok := k.(string)
		if !ok || !utf8.ValidString(key) {
			return nil, false // sigs.k8s.io/yaml turns other keys into strings its own way
		}
		je, ok := jsonOfYAMLValue(e, depth+1)
		if !ok {
			return nil, false
		}
		out[key] = je
	}
	return out, true
}

func jsonOfYAMLValue(v interface{}, depth int) (interface{}, bool) {
	if depth > maxFastDepth {
		return nil, false
	}
	switch v := v.(type) {
	case nil, bool:
		return v, true
	case string:
		return v, utf8.ValidString(v)
	case int:
		return float64(v), true // JSON numbers decode as float64, rounded as this conversion rounds
	case int64:
		return float64(v), true
	case uint64:
		return float64(v), true
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, false
		}
		return v, true
	case map[interface{}]interface{}:
		m, ok := jsonOfYAMLMap(v, depth)
		return m, ok
	case []interface{}:
		return convertList(v, depth, jsonOfYAMLValue)
	}
	return nil, false
}

// convertList: a new list of v's elements, each converted one level deeper; false when one cannot be.
func convertList(v []interface{}, depth int, convert func(interface{}, int) (interface{}, bool)) (interface{}, bool) {
	out := make([]interface{}, len(v))
	for i, e := range v {
		c, ok := convert(e, depth+1)
		if !ok {
			return nil, false
		}
		out[i] = c
	}
	return out, true
}
