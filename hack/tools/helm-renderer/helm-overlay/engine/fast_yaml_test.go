package engine

// Run with `go test ./helm-overlay/engine/` in hack/tools/helm-renderer (shared/helm/test/
// fast-yaml.test.ts does): the fast toYaml and fromYaml against Helm's own, on edge cases and
// on random values, each compared as output text (toYaml) or as the decoded value (fromYaml).

import (
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"testing"

	yamlv2 "go.yaml.in/yaml/v2"
)

type opaque struct{ A int }

var edgeValues = []interface{}{
	nil, "", " ", "yes", "no", "on", "off", "y", "null", "~", "true", "1", "0x10", "0o17", "1e3", "1_000",
	".inf", "-.nan", "2001-12-14", "a: b", "- x", "# c", "\n", "a\nb\n", "\t", "é", "\u2028", "<>&",
	"\x00", "\xff", "a\u0085b", "\u007f", "\u009f", "\ufeff", "\ufffe", "\uffff", "\ufffd", "\U0001F600", "'", "\"", "---", "...", "@x", "`x", "%x", "!x", "&x", "*x", "{a}", "[a]",
	true, false,
	0, 1, -1, math.MaxInt64, math.MinInt64, int64(1 << 62), int32(-7),
	0.0, math.Copysign(0, -1), 0.1, -2.5, 1e-6, 1e-7, 1.5e-300, 3.0, 1e15, 1e20, 1e21, 1e300,
	float64(1<<53 - 1), float64(1 << 53), float64(1 << 60), float64(1<<53) + 2, -float64(1 << 53),
	math.NaN(), math.Inf(1), math.Inf(-1), float32(1.5), uint64(math.MaxUint64), uint(3),
	map[string]interface{}(nil), map[string]interface{}{}, []interface{}(nil), []interface{}{},
	[]string(nil), []string{}, []string{"a", "yes", "\xff"}, []string{"1", "b"},
	map[string]interface{}{"a": 1, "b": []interface{}{1, "2", 3.5, nil, map[string]interface{}{"c": true}}},
	map[string]interface{}{"\xff": 1}, map[string]interface{}{"yes": "no", "1": 1, "": ""},
	map[string]interface{}{"x": opaque{1}}, opaque{2}, &opaque{3}, map[string]string{"a": "b"},
	map[string]interface{}{"n": math.NaN()}, []interface{}{math.Inf(1)},
	map[string]interface{}{"a10": 1, "a9": 2, "a": 3, "B": 4, "b": 5, "10": 6, "9": 7},
}

var edgeDocuments = []string{
	"", "a", "1", "- 1\n- 2", "null", "~", "a: 1", "a: .nan", "a: .inf", "a: -.inf", "a: 0x1F", "a: 0o17", "a: 017",
	"a: 1_000", "a: 9223372036854775807", "a: 9223372036854775808", "a: 18446744073709551616",
	"a: 9007199254740993", "a: 1e400", "a: -0", "a: -0.0", "a: 0.1", "a: 1e-7", "a: 2001-12-14",
	"a: !!timestamp 2001-12-14", "a: 2001-12-14T21:59:43.10-05:00", "a: !!binary aGVsbG8=", "a: 'yes'", "a: yes",
	"a: on", "a: \"\\xff\"", "a: \"\\u2028\"", "a:\n  b:\n  - c: 1\n    d: [1, 2]", "a: [", "a: b: c",
	"a: 1\na: 2", "1: a", "true: x", "1.5: y", "null: z", "~: q", "? [a]\n: 1", "a: &x {b: 1}\nc: *x",
	"<<: {a: 1}\nb: 2", "a: 1\n---\nb: 2", "---\na: 1", "a: |\n  x\n  y\n", "a: >\n  x\n  y\n",
	"a: !!str 1", "a: !!int \"3\"", "a: !!float 1", "a: !custom x", "a: {}", "a: []", "{}", "[]",
	"a:\n  - b\n  -\n  - c", "a: \"\\t\\n\"", "\"a\": 1", "'b': 2", "a: 0b101", "a: +12", "a: -12.5e3",
	"a:\n  b:\n    c:\n      d: e",
}

func TestToYAMLEdgeCases(t *testing.T) {
	for _, v := range edgeValues {
		checkToYAML(t, v)
	}
}

func TestFromYAMLEdgeCases(t *testing.T) {
	for _, doc := range edgeDocuments {
		checkFromYAML(t, doc)
	}
}

func TestRandomValues(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	fastTo, fastFrom := 0, 0
	for i := 0; i < 20000; i++ {
		v := randomValue(r, 0)
		checkToYAML(t, v)
		if _, ok := yamlOfJSONValue(v, 0); ok {
			fastTo++
		}
		// fromYaml of what toYaml printed, and of yaml.v2's own output, whose keys need not be strings.
		doc := toYAML(map[string]interface{}{"v": v})
		checkFromYAML(t, doc)
		var y interface{}
		if yamlv2.Unmarshal([]byte(doc), &y) == nil {
			if ym, ok := y.(map[interface{}]interface{}); ok {
				if _, ok := jsonOfYAMLMap(ym, 0); ok {
					fastFrom++
				}
			}
		}
		if data, err := yamlv2.Marshal(randomYAMLMap(r, 0)); err == nil {
			checkFromYAML(t, string(data))
		}
	}
	// Random values that all fell back to Helm's path would prove nothing.
	if fastTo < 5000 || fastFrom < 5000 {
		t.Fatalf("the fast path took only %d toYaml and %d fromYaml calls of 20000", fastTo, fastFrom)
	}
	t.Logf("fast path: %d toYaml, %d fromYaml calls of 20000", fastTo, fastFrom)
}

// The fast fromYaml's maps are its own: changing one changes nothing that another call returned.
func TestFromYAMLValuesAreFresh(t *testing.T) {
	doc := "a: &x {b: [1, 2]}\nc: *x"
	m := mooringFromYAML(doc)
	m["a"].(map[string]interface{})["b"].([]interface{})[0] = "changed"
	if got := mooringFromYAML(doc); !same(got, fromYAML(doc)) {
		t.Fatalf("a later call saw an earlier call's change: %#v", got)
	}
	if c := m["c"].(map[string]interface{})["b"].([]interface{})[0]; c != float64(1) {
		t.Fatalf("an alias shares its value with its anchor: %#v", c)
	}
}

func checkToYAML(t *testing.T, v interface{}) {
	t.Helper()
	if want, got := toYAML(v), mooringToYAML(v); got != want {
		t.Fatalf("toYaml %#v:\nhelm:   %q\nmooring: %q", v, want, got)
	}
}

func checkFromYAML(t *testing.T, doc string) {
	t.Helper()
	if want, got := fromYAML(doc), mooringFromYAML(doc); !same(got, want) {
		t.Fatalf("fromYaml %q:\nhelm:    %#v\nmooring: %#v", doc, want, got)
	}
}

// same: equal values of equal types; %#v also tells -0 from 0, which == does not.
func same(a, b interface{}) bool {
	return reflect.DeepEqual(a, b) && fmt.Sprintf("%#v", a) == fmt.Sprintf("%#v", b)
}

var randomStrings = []string{"a", "b", "yes", "No", "1", "1.0", "-3", "0x1", "null", "", " x", "x ", "a: b",
	"\n", "é", "\xfe", "true", "~", "2001-12-14", "1e9", "[x]", "'q'", "\"d\"", "- l", "#", "key", "name"}

func randomString(r *rand.Rand) string {
	if r.Intn(4) == 0 {
		b := make([]rune, r.Intn(6))
		for i := range b {
			b[i] = rune(r.Intn(0x3000))
			if r.Intn(8) == 0 {
				b[i] = rune(0xFFF0 + r.Intn(0x20))
			}
		}
		return string(b)
	}
	return randomStrings[r.Intn(len(randomStrings))]
}

func randomNumber(r *rand.Rand) interface{} {
	switch r.Intn(8) {
	case 0:
		return r.Intn(2000) - 1000
	case 1:
		return int64(r.Uint64())
	case 2:
		return float64(r.Intn(2000) - 1000)
	case 3:
		return r.NormFloat64() * math.Pow(10, float64(r.Intn(40)-20))
	case 4:
		return float64(int64(1)<<53) + float64(r.Intn(9)-4)
	case 5:
		return math.Float64frombits(r.Uint64())
	case 6:
		return float64(r.Int63()) * float64(r.Intn(3))
	}
	return math.Trunc(r.Float64() * 1e22)
}

func randomValue(r *rand.Rand, depth int) interface{} {
	k := r.Intn(10)
	if depth > 4 {
		k = r.Intn(5)
	}
	switch k {
	case 0:
		return nil
	case 1, 2:
		return randomString(r)
	case 3:
		return r.Intn(2) == 0
	case 4:
		return randomNumber(r)
	case 5, 6:
		m := map[string]interface{}{}
		for i := r.Intn(5); i > 0; i-- {
			m[randomString(r)] = randomValue(r, depth+1)
		}
		return m
	case 7:
		l := make([]interface{}, r.Intn(4))
		for i := range l {
			l[i] = randomValue(r, depth+1)
		}
		return l
	case 8:
		return []string{randomString(r), randomString(r)}
	}
	return opaque{r.Intn(3)}
}

// randomYAMLMap's keys differ as JSON keys too: sigs.k8s.io/yaml keeps one of true and "true" at
// random, so such a map has no one answer to compare with.
func randomYAMLMap(r *rand.Rand, depth int) map[interface{}]interface{} {
	m := map[interface{}]interface{}{}
	asJSON := map[string]bool{}
	for i := r.Intn(4); i > 0; i-- {
		var key interface{} = randomString(r)
		switch r.Intn(8) {
		case 0:
			key = r.Intn(20)
		case 1:
			key = r.Intn(2) == 0
		case 2:
			key = float64(r.Intn(8)) / 4
		}
		if asJSON[fmt.Sprint(key)] {
			continue
		}
		asJSON[fmt.Sprint(key)] = true
		if depth < 3 && r.Intn(3) == 0 {
			m[key] = randomYAMLMap(r, depth+1)
		} else {
			m[key] = randomValue(r, depth+3)
		}
	}
	return m
}
