package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"

	"github.com/waitroom/waitroom/waitroom/conf"
)

// envPrefix starts every environment override: WAITROOM_LISTEN,
// WAITROOM_ROOMS_CONCERT_MAX_ACTIVE, ...
const envPrefix = "WAITROOM"

// ConfigError lists every problem of a configuration file by key path.
type ConfigError struct {
	File     string
	Problems []string
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	noun := "problems"
	if len(e.Problems) == 1 {
		noun = "problem"
	}
	fmt.Fprintf(&b, "%s: %d %s", e.File, len(e.Problems), noun)
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p)
	}
	return b.String()
}

// loadConfig reads a YAML file, expands ${ENV} references, applies defaults
// and WAITROOM_* overrides, and builds the result (build.go). Any problem,
// the file's own included, comes back as a *ConfigError.
func loadConfig(path string) (*Settings, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, &ConfigError{File: path, Problems: []string{fmt.Sprintf("cannot read the file: %v", errors.Unwrap(err))}}
	}
	return parseConfig(path, raw)
}

// parseConfig is loadConfig on bytes already read; name labels the problems.
func parseConfig(name string, raw []byte) (*Settings, error) {
	fail := func(problems ...string) (*Settings, error) {
		return nil, &ConfigError{File: name, Problems: problems}
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return fail("the file is empty; see configs/waitroom.yaml for every key")
	}
	var tree map[string]any
	if err := yaml.Unmarshal(raw, &tree); err != nil {
		return fail(fmt.Sprintf("not valid YAML: %v", err))
	}
	if tree == nil {
		return fail("the file holds no settings; see configs/waitroom.yaml for every key")
	}
	var problems []string
	problems = append(problems, expandEnv("", tree)...)
	problems = append(problems, checkNames(tree)...)
	problems = append(problems, checkCase("", tree)...)

	v := viper.New()
	v.SetEnvPrefix(envPrefix)
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_", "-", "_"))
	v.AutomaticEnv()
	// Env overrides reach Unmarshal only for keys viper already knows, so
	// every key of every default gets registered, per room and upstream too.
	setDefaults(v, "", defaultsOf(DefaultConfig()))
	for _, room := range mapKeys(tree["rooms"]) {
		setDefaults(v, "rooms."+strings.ToLower(room), defaultsOf(DefaultRoomConfig()))
	}
	for _, up := range mapKeys(tree["upstreams"]) {
		setDefaults(v, "upstreams."+strings.ToLower(up), defaultsOf(defaultUpstream()))
	}
	if err := v.MergeConfigMap(tree); err != nil {
		return fail(fmt.Sprintf("reading settings: %v", err))
	}
	cfg := new(Config)
	var md mapstructure.Metadata
	err := v.Unmarshal(cfg, func(dc *mapstructure.DecoderConfig) {
		dc.Metadata = &md
		dc.DecodeHook = mapstructure.ComposeDecodeHookFunc(dc.DecodeHook, strictScalars)
	})
	if err != nil {
		problems = append(problems, decodeProblems(err)...)
	}
	for _, k := range md.Unused {
		problems = append(problems, keyPath(k)+": unknown key")
	}
	var s *Settings
	var secrets []byte
	if err == nil {
		var more []string
		secrets, more = readSecretFiles(cfg)
		problems = append(problems, more...)
		var berr error
		s, berr = build(cfg)
		problems = append(problems, conf.Lines("", berr)...)
	}
	if len(problems) > 0 {
		sortProblems(problems)
		return fail(problems...)
	}
	// The secrets' digest joins the file's bytes, so a rotated secret is a
	// changed configuration to a reload.
	sum := sha256.Sum256(secrets)
	s.file = append(append(raw[:len(raw):len(raw)], 0), sum[:]...)
	return s, nil
}

// readSecretFiles fills the secrets that name a file (a mounted
// Kubernetes secret, a systemd credential) from it: the admin token, the
// Redis password, and the cookie keys, one per line. A secret given both
// inline and as a file is refused, as is an unreadable or empty file. It
// returns what it read, for the fingerprint.
func readSecretFiles(c *Config) ([]byte, []string) {
	var problems []string
	var read []byte
	one := func(key, file string, inline bool) (string, bool) {
		if file == "" {
			return "", false
		}
		if inline {
			problems = append(problems, fmt.Sprintf("%s: give the secret or its file, not both", key))
			return "", false
		}
		b, err := os.ReadFile(file)
		if err != nil || len(bytes.TrimSpace(b)) == 0 {
			problems = append(problems, fmt.Sprintf("%s: cannot read a secret from %q (%v)", key, file, errOrEmpty(err)))
			return "", false
		}
		read = append(append(read, b...), 0)
		return strings.TrimSpace(string(b)), true
	}
	if v, ok := one("admin.token_file", c.Admin.TokenFile, c.Admin.Token != ""); ok {
		c.Admin.Token = v
	}
	if v, ok := one("admin.release_token_file", c.Admin.ReleaseTokenFile, c.Admin.ReleaseToken != ""); ok {
		c.Admin.ReleaseToken = v
	}
	if v, ok := one("store.redis.password_file", c.Store.Redis.PasswordFile, c.Store.Redis.Password != ""); ok {
		c.Store.Redis.Password = v
	}
	if v, ok := one("cookie.hash_keys_file", c.Cookie.HashKeysFile, len(c.Cookie.HashKeys) > 0); ok {
		c.Cookie.HashKeys = strings.Fields(v)
	}
	if v, ok := one("cookie.block_keys_file", c.Cookie.BlockKeysFile, len(c.Cookie.BlockKeys) > 0); ok {
		c.Cookie.BlockKeys = strings.Fields(v)
	}
	return read, problems
}

func errOrEmpty(err error) error {
	if err != nil {
		return errors.Unwrap(err)
	}
	return errors.New("it is empty")
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expandEnv replaces ${NAME} in every string of the tree, in place. An unset
// variable is a problem, not an empty string: an empty secret must not pass
// for a configured one.
func expandEnv(path string, node any) []string {
	var problems []string
	expand := func(key string, s string) string {
		return envRef.ReplaceAllStringFunc(s, func(ref string) string {
			name := envRef.FindStringSubmatch(ref)[1]
			val, ok := os.LookupEnv(name)
			if !ok {
				problems = append(problems, fmt.Sprintf("%s: environment variable %s is not set", key, name))
			}
			return val
		})
	}
	switch n := node.(type) {
	case map[string]any:
		for k, child := range n {
			key := joinKey(path, k)
			if s, ok := child.(string); ok {
				n[k] = expand(key, s)
			} else {
				problems = append(problems, expandEnv(key, child)...)
			}
		}
	case []any:
		for i, child := range n {
			key := fmt.Sprintf("%s[%d]", path, i)
			if s, ok := child.(string); ok {
				n[i] = expand(key, s)
			} else {
				problems = append(problems, expandEnv(key, child)...)
			}
		}
	}
	return problems
}

var (
	roomNamePattern     = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)
	templateNamePattern = regexp.MustCompile(`^([a-z0-9_-]|\{[a-z][a-z0-9_]*\}){1,64}$`)
)

// checkNames refuses room and upstream names that would not survive as a
// cookie name, a Redis key or an environment variable: viper would
// otherwise fold "Concert" into "concert" behind the operator's back.
func checkNames(tree map[string]any) []string {
	var problems []string
	for _, section := range []string{"rooms", "upstreams"} {
		for _, name := range mapKeys(tree[section]) {
			if section == "rooms" && strings.Contains(name, "{") {
				if !templateNamePattern.MatchString(name) || len(name) > 64 {
					problems = append(problems, fmt.Sprintf("%s.%s: a room template's name is up to 64 lower-case letters, digits, '-', '_' and parameters such as {id}", section, name))
				}
				continue
			}
			if !roomNamePattern.MatchString(name) {
				problems = append(problems, fmt.Sprintf("%s.%s: name must be 1 to 64 lower-case letters, digits, '-' or '_', starting with a letter or digit", section, name))
			}
		}
	}
	return problems
}

// checkCase refuses upper-case keys, which viper would quietly fold:
// "Listen:" must not work in one version and fail in the next.
func checkCase(path string, node any) []string {
	var problems []string
	switch n := node.(type) {
	case map[string]any:
		for k, child := range n {
			key := joinKey(path, k)
			named := path == "rooms" || path == "upstreams" // checkNames has these
			if k != strings.ToLower(k) && !named {
				problems = append(problems, fmt.Sprintf("%s: keys are lower case; did you mean %q?", key, strings.ToLower(k)))
			}
			problems = append(problems, checkCase(key, child)...)
		}
	case []any:
		for i, child := range n {
			problems = append(problems, checkCase(fmt.Sprintf("%s[%d]", path, i), child)...)
		}
	}
	return problems
}

// sortProblems orders problems by key, with list indexes in numeric order
// (routes[2] before routes[10]).
func sortProblems(ps []string) {
	sort.SliceStable(ps, func(i, j int) bool { return naturalLess(ps[i], ps[j]) })
}

func naturalLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := digitsPrefix(a), digitsPrefix(b)
		if da != "" && db != "" {
			if len(da) != len(db) {
				return len(da) < len(db)
			}
			if da != db {
				return da < db
			}
			a, b = a[len(da):], b[len(db):]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func digitsPrefix(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

func mapKeys(node any) []string {
	m, _ := node.(map[string]any)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// defaultsOf turns a default struct into a tree through its json tags,
// which mirror the mapstructure ones.
func defaultsOf(v any) map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("marshalling defaults: %v", err)) // a programming error
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		panic(fmt.Sprintf("unmarshalling defaults: %v", err))
	}
	return m
}

func setDefaults(v *viper.Viper, prefix string, tree map[string]any) {
	for k, val := range tree {
		key := joinKey(prefix, k)
		if sub, ok := val.(map[string]any); ok && len(sub) > 0 {
			setDefaults(v, key, sub)
			continue
		}
		if _, ok := val.(map[string]any); ok || val == nil {
			continue // rooms, upstreams and routes have no default entries
		}
		v.SetDefault(key, val)
	}
}

func joinKey(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

var decodeLine = regexp.MustCompile(`'([^']*)' (.*)`)

// decodeProblems rewrites mapstructure's type errors as "key: message".
func decodeProblems(err error) []string {
	var out []string
	for _, line := range strings.Split(err.Error(), "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "* "))
		if m := decodeLine.FindStringSubmatch(line); m != nil {
			out = append(out, keyPath(m[1])+": "+m[2])
		}
	}
	if len(out) == 0 {
		out = append(out, err.Error())
	}
	return out
}

var mapIndex = regexp.MustCompile(`\[([^\]]*[^0-9\]][^\]]*)\]`)

// keyPath turns mapstructure's "rooms[concert].page" into "rooms.concert.page",
// keeping list indexes such as "routes[0]".
func keyPath(k string) string {
	return mapIndex.ReplaceAllString(k, ".$1")
}

// strictScalars refuses what viper's weak typing would quietly change or
// word badly: a fraction for a whole number (max_active: 300.5 became 300)
// and a word that is no bool (secure: off was a raw strconv error). Strings
// from WAITROOM_* overrides still convert as before.
func strictScalars(_, to reflect.Type, data any) (any, error) {
	switch to.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		f, ok := data.(float64)
		if s, isText := data.(string); isText {
			if _, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err != nil {
				f, err = strconv.ParseFloat(strings.TrimSpace(s), 64)
				ok = err == nil // a number, but not a whole one: say so
			}
		}
		if ok && (f != math.Trunc(f) || math.Abs(f) > math.MaxInt64) {
			return nil, fmt.Errorf("want a whole number, got %v", f)
		}
	case reflect.Bool:
		if s, ok := data.(string); ok {
			b, err := strconv.ParseBool(s)
			if err != nil {
				return nil, fmt.Errorf("want true or false, got %q", s)
			}
			return b, nil
		}
	}
	return data, nil
}
