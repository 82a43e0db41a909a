package main

// values.schema.json validation as pkg/chartutil ValidateAgainstSchema and
// ValidateAgainstSingleSchema do it (copied below, statement for statement, messages included),
// with one change: the compiled schema is kept, by the schema's bytes, instead of compiled anew
// each render. Compiling is most of a render for a chart with a large schema (cert-manager's:
// about 40% of its warm render); validating against the compiled schema is cheap. A compiled
// jsonschema.Schema is immutable and reusable. It depends only on the schema's bytes here: the
// references it may load (file, http, https) reach nothing in this sandbox, and a compile that
// fails is not kept, so it fails again the same way.

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
)

// The kept schemas, and a bound on them: when either is passed, all are dropped.
var (
	compiledSchemas     = map[string]*jsonschema.Schema{}
	compiledSchemaBytes int
)

const (
	maxCompiledSchemas     = 64
	maxCompiledSchemaBytes = 8 << 20
)

// validateAgainstSchema is chartutil.ValidateAgainstSchema.
func validateAgainstSchema(chrt *chart.Chart, values map[string]interface{}) error {
	var sb strings.Builder
	if chrt.Schema != nil {

		err := validateAgainstSingleSchema(values, chrt.Schema)
		if err != nil {
			fmt.Fprintf(&sb, "%s:\n", chrt.Name())
			sb.WriteString(err.Error())
		}
	}

	for _, subchart := range chrt.Dependencies() {
		raw, exists := values[subchart.Name()]
		if !exists || raw == nil {
			// No values provided for this subchart; nothing to validate
			continue
		}

		subchartValues, ok := raw.(map[string]any)
		if !ok {
			fmt.Fprintf(&sb,
				"%s:\ninvalid type for values: expected object (map), got %T\n",
				subchart.Name(), raw,
			)
			continue
		}
		if err := validateAgainstSchema(subchart, subchartValues); err != nil {
			sb.WriteString(err.Error())
		}
	}

	if sb.Len() > 0 {
		return errors.New(sb.String())
	}

	return nil
}

// validateAgainstSingleSchema is chartutil.ValidateAgainstSingleSchema, compiling through
// compiledSchema.
func validateAgainstSingleSchema(values chartutil.Values, schemaJSON []byte) (reterr error) {
	defer func() {
		if r := recover(); r != nil {
			reterr = fmt.Errorf("unable to validate schema: %s", r)
		}
	}()

	validator, err := compiledSchema(schemaJSON)
	if err != nil {
		return err
	}

	err = validator.Validate(values.AsMap())
	if err != nil {
		return schemaValidationError{err}
	}

	return nil
}

// compiledSchema is the schema part of chartutil.ValidateAgainstSingleSchema, kept.
func compiledSchema(schemaJSON []byte) (*jsonschema.Schema, error) {
	if s, ok := compiledSchemas[string(schemaJSON)]; ok {
		return s, nil
	}

	// This unmarshal function leverages UseNumber() for number precision. The parser
	// used for values does this as well.
	schema, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return nil, err
	}

	// Configure compiler with loaders for different URL schemes
	loader := jsonschema.SchemeURLLoader{
		"file":  jsonschema.FileLoader{},
		"http":  newHTTPURLLoader(),
		"https": newHTTPURLLoader(),
		"urn":   urnLoader{},
	}

	compiler := jsonschema.NewCompiler()
	compiler.UseLoader(loader)
	err = compiler.AddResource("file:///values.schema.json", schema)
	if err != nil {
		return nil, err
	}

	validator, err := compiler.Compile("file:///values.schema.json")
	if err != nil {
		return nil, err
	}

	if len(compiledSchemas) >= maxCompiledSchemas || compiledSchemaBytes+len(schemaJSON) > maxCompiledSchemaBytes {
		compiledSchemas, compiledSchemaBytes = map[string]*jsonschema.Schema{}, 0
	}
	compiledSchemas[string(schemaJSON)] = validator
	compiledSchemaBytes += len(schemaJSON)
	return validator, nil
}

// schemaValidationError is chartutil.JSONSchemaValidationError, whose field is unexported.
type schemaValidationError struct {
	embeddedErr error
}

func (e schemaValidationError) Error() string {
	errStr := e.embeddedErr.Error()

	errStr = strings.TrimPrefix(errStr, "jsonschema validation failed with 'file:///values.schema.json#'\n")

	return errStr + "\n"
}

// newHTTPURLLoader is chartutil's (unexported); in this sandbox it has no network to reach.
func newHTTPURLLoader() *chartutil.HTTPURLLoader {
	httpLoader := chartutil.HTTPURLLoader(http.Client{
		Timeout: 15 * time.Second,
		Transport: &http.Transport{
			Proxy:           http.ProxyFromEnvironment,
			TLSClientConfig: &tls.Config{},
		},
	})
	return &httpLoader
}

// urnLoader is chartutil's (unexported): chartutil.URNResolver, else a permissive schema (Helm
// logs a warning, which this renderer discards).
type urnLoader struct{}

func (l urnLoader) Load(urlStr string) (any, error) {
	if doc, err := chartutil.URNResolver(urlStr); err == nil && doc != nil {
		return doc, nil
	}
	return jsonschema.UnmarshalJSON(strings.NewReader("true"))
}
