package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

const schemaFile = "../../configs/waitroom.schema.json"

// TestSchema_Committed keeps the committed schema equal to what the
// config types generate, so a new key cannot be missing from it.
func TestSchema_Committed(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(t.Context(), []string{"schema"}, &out, &errOut); code != 0 {
		t.Fatalf("waitroom schema: exit %d: %s", code, errOut.String())
	}
	committed, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), committed) {
		t.Fatalf("configs/waitroom.schema.json is not what the config types generate; run: go run ./cmd/waitroom schema > configs/waitroom.schema.json")
	}
}

// shippedConfigs are the configuration files the project ships, each with
// the modeline an editor follows to the schema.
var shippedConfigs = []string{"configs/waitroom.yaml", "configs/examples/ticketing.yaml", "loadtest/spike-redis.yaml"}

var modeline = regexp.MustCompile(`(?m)^# yaml-language-server: \$schema=(\S+)$`)

func TestSchema_ShippedFilesValidate(t *testing.T) {
	schema := loadSchema(t)
	for _, name := range shippedConfigs {
		raw, err := os.ReadFile(filepath.Join("../..", name))
		if err != nil {
			t.Fatal(err)
		}
		m := modeline.FindSubmatch(raw)
		if m == nil {
			t.Errorf("%s: no yaml-language-server modeline", name)
		} else if got := filepath.Join(filepath.Dir(name), string(m[1])); got != "configs/waitroom.schema.json" {
			t.Errorf("%s: modeline names %s, want a path to configs/waitroom.schema.json", name, got)
		}
		if errs := validate(schema, yamlTree(t, raw), ""); len(errs) > 0 {
			t.Errorf("%s does not match the schema: %v", name, errs)
		}
	}
	// The ConfigMap carries a configuration inside a string.
	cm, err := os.ReadFile("../../deploy/kubernetes/configmap.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Data map[string]string `yaml:"data"`
	}
	if err := yaml.Unmarshal(cm, &doc); err != nil || doc.Data["waitroom.yaml"] == "" {
		t.Fatalf("configmap: %v, data keys %v", err, doc.Data)
	}
	if errs := validate(schema, yamlTree(t, []byte(doc.Data["waitroom.yaml"])), ""); len(errs) > 0 {
		t.Errorf("the ConfigMap's configuration does not match the schema: %v", errs)
	}
}

// TestSchema_Refuses checks that what the loader refuses as an unknown
// key or a wrong type, the schema refuses too, at the same key.
func TestSchema_Refuses(t *testing.T) {
	schema := loadSchema(t)
	if errs := validate(schema, yamlTree(t, []byte(goodConfig)), ""); len(errs) > 0 {
		t.Fatalf("a good file does not match: %v", errs)
	}
	tests := []struct{ name, edit, key string }{
		{"unknown top-level key", "lisen: \":8080\"\n", "lisen"},
		{"unknown room key", "rooms:\n  concert: { max_activ: 5 }\n", "rooms.concert.max_activ"},
		{"unknown nested key", "store: { redis: { adress: x } }\n", "store.redis.adress"},
		{"wrong type", "rooms:\n  concert: { max_active: [1] }\n", "rooms.concert.max_active"},
		{"not a choice", "store: { kind: postgres }\n", "store.kind"},
		{"bad room name", "rooms:\n  Concert: { max_active: 5 }\n", "rooms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := []byte(goodConfig)
			if strings.HasPrefix(tt.edit, "rooms:") {
				// Replace the good file's rooms and routes with the edit's room.
				raw = []byte(strings.Split(goodConfig, "rooms:")[0] + tt.edit)
			} else {
				raw = append(raw, tt.edit...)
			}
			errs := validate(schema, yamlTree(t, raw), "")
			if !slices.ContainsFunc(errs, func(e string) bool { return strings.HasPrefix(e, tt.key+":") }) {
				t.Errorf("schema errors %v, want one at %s", errs, tt.key)
			}
			if _, err := parseConfig("edit.yaml", raw); err == nil || !strings.Contains(err.Error(), tt.key) {
				t.Errorf("the loader says %v, want a problem at %s", err, tt.key)
			}
		})
	}
	// A value the loader turns into a number or a flag after ${ENV} passes.
	raw := []byte(strings.Split(goodConfig, "rooms:")[0] + "rooms:\n  concert: { max_active: \"${MAX}\" }\n")
	if errs := validate(schema, yamlTree(t, raw), ""); len(errs) > 0 {
		t.Errorf("${MAX} for a number: %v", errs)
	}
}

// TestSchema_ChoicesMatchLoader loads every value schemaChoices lists and
// one it does not, so the table cannot drift from what the loader takes.
func TestSchema_ChoicesMatchLoader(t *testing.T) {
	base := strings.Split(goodConfig, "rooms:")[0] +
		"rooms:\n  concert: { max_active: 5 }\nroutes:\n  - { path: /, upstream: shop, room: concert }\n"
	for path, choices := range schemaChoices {
		key := strings.ReplaceAll(path, "*", "concert")
		for _, v := range append(slices.Clone(choices), "bogus") {
			tree := yamlTree(t, []byte(base)).(map[string]any)
			if path == "webhooks.events" {
				key = "webhooks[0].events"
				tree["webhooks"] = []any{map[string]any{"url": "https://hooks.example/w",
					"secret": "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 32)), "events": []any{v}}}
			} else {
				setPath(tree, strings.Split(key, "."), v)
			}
			raw, err := yaml.Marshal(tree)
			if err != nil {
				t.Fatal(err)
			}
			_, err = parseConfig("choice.yaml", raw)
			refused := err != nil && strings.Contains(err.Error(), key)
			if err != nil && !refused {
				t.Errorf("%s: %q: the loader refuses something else: %v", key, v, err)
			}
			if want := v == "bogus"; refused != want {
				t.Errorf("%s: %q: the loader says %v, want refused %v", key, v, err, want)
			}
		}
	}
}

func setPath(m map[string]any, keys []string, v any) {
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[keys[len(keys)-1]] = v
}

func loadSchema(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func yamlTree(t *testing.T, raw []byte) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// validate checks v against the parts of JSON Schema the generated schema
// uses (type, properties, additionalProperties, propertyNames, items,
// enum, pattern, maxLength, anyOf), and returns "key: problem" lines.
func validate(s map[string]any, v any, key string) []string {
	at := key
	if at == "" {
		at = "(top)"
	}
	var errs []string
	if anyOf, ok := s["anyOf"].([]any); ok {
		ok := false
		for _, sub := range anyOf {
			if len(validate(sub.(map[string]any), v, key)) == 0 {
				ok = true
				break
			}
		}
		if !ok {
			errs = append(errs, fmt.Sprintf("%s: %v matches none of the allowed forms", at, v))
		}
	}
	if typ, ok := s["type"].(string); ok && !hasType(v, typ) {
		return append(errs, fmt.Sprintf("%s: want %s, got %T", at, typ, v))
	}
	if enum, ok := s["enum"].([]any); ok && !slices.Contains(enum, v) {
		errs = append(errs, fmt.Sprintf("%s: %v is not one of %v", at, v, enum))
	}
	if str, ok := v.(string); ok {
		if p, ok := s["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(str) {
			errs = append(errs, fmt.Sprintf("%s: %q does not match %s", at, str, p))
		}
		if n, ok := s["maxLength"].(float64); ok && len([]rune(str)) > int(n) {
			errs = append(errs, fmt.Sprintf("%s: longer than %v", at, n))
		}
	}
	if obj, ok := v.(map[string]any); ok {
		props, _ := s["properties"].(map[string]any)
		for k, child := range obj {
			ck := k
			if key != "" {
				ck = key + "." + k
			}
			if names, ok := s["propertyNames"].(map[string]any); ok {
				if len(validate(names, k, key)) > 0 {
					errs = append(errs, fmt.Sprintf("%s: name %q is not allowed", at, k))
				}
			}
			if p, ok := props[k]; ok {
				errs = append(errs, validate(p.(map[string]any), child, ck)...)
				continue
			}
			switch ap := s["additionalProperties"].(type) {
			case bool:
				if !ap {
					errs = append(errs, ck+": unknown key")
				}
			case map[string]any:
				errs = append(errs, validate(ap, child, ck)...)
			}
		}
	}
	if list, ok := v.([]any); ok {
		if items, ok := s["items"].(map[string]any); ok {
			for i, child := range list {
				errs = append(errs, validate(items, child, fmt.Sprintf("%s[%d]", key, i))...)
			}
		}
	}
	return errs
}

func hasType(v any, typ string) bool {
	switch typ {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "integer":
		_, ok := v.(int)
		return ok
	case "number":
		switch v.(type) {
		case int, float64:
			return true
		}
	}
	return false
}

// Every key of the schema carries a description and a default for an
// editor's hover, both from configs/waitroom.yaml; a key without a default
// (an object, whose keys have theirs, or a required value) says why.
func TestSchema_EveryKeyHasDescriptionAndDefault(t *testing.T) {
	t.Parallel()
	var walk func(node map[string]any, path string)
	n := 0
	walk = func(node map[string]any, path string) {
		props, _ := node["properties"].(map[string]any)
		for name, v := range props {
			p := joinKey(path, name)
			s := v.(map[string]any)
			n++
			desc, _ := s["description"].(string)
			if len(desc) < 8 {
				t.Errorf("%s: no description (%q)", p, desc)
			}
			_, hasDefault := s["default"]
			if !hasDefault && s["type"] != "object" && !strings.Contains(desc, "(no default: ") {
				t.Errorf("%s: no default and no reason why", p)
			}
			walk(s, p)
			if items, ok := s["items"].(map[string]any); ok {
				walk(items, p)
			}
			if more, ok := s["additionalProperties"].(map[string]any); ok {
				walk(more, joinKey(p, "*"))
			}
		}
	}
	walk(configSchema(), "")
	if n < 100 {
		t.Fatalf("only %d keys walked", n)
	}
	// The values are the file's, typed as JSON: a spot check of each kind.
	rooms := configSchema()["properties"].(map[string]any)["rooms"].(map[string]any)["additionalProperties"].(map[string]any)["properties"].(map[string]any)
	for key, want := range map[string]any{"max_active": 100, "admit_rate": "unlimited", "challenge": "off", "challenge_bits": 14} {
		if got := rooms[key].(map[string]any)["default"]; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("rooms.*.%s: default %v, want %v", key, got, want)
		}
	}
	if d := rooms["max_active"].(map[string]any)["description"]; d != "sessions inside at once; 0 admits nobody" {
		t.Errorf("rooms.*.max_active: description %q", d)
	}
}
