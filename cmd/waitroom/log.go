package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.yaml.in/yaml/v3"

	"github.com/waitroom/waitroom/waitroom/redisstore"
	"github.com/waitroom/waitroom/waitroom/webhook"
)

// newLogger builds the one root logger: JSON in production, console for
// people at a terminal.
func newLogger(c LogConfig) (*zap.Logger, error) {
	zc := zap.NewProductionConfig()
	if c.Format == "console" {
		zc = zap.NewDevelopmentConfig()
		zc.EncoderConfig.EncodeLevel = zapcore.CapitalColorLevelEncoder
	}
	lvl, err := zapcore.ParseLevel(c.Level)
	if err != nil {
		return nil, fmt.Errorf("log.level: %w", err)
	}
	zc.Level = zap.NewAtomicLevelAt(lvl)
	zc.DisableStacktrace = true
	log, err := zc.Build()
	if err != nil {
		return nil, fmt.Errorf("building logger: %w", err)
	}
	return log, nil
}

const redacted = "REDACTED"

// writeRedacted prints the effective configuration as YAML with every
// secret replaced, so it can be pasted into a ticket or a chat. It goes by
// the keys' names, not a list of fields, so a secret a later section adds
// is redacted too: the value of every key in secretKeys (each item of a
// list), and the password of every URL that carries one (a webhook's, a
// Redis address's).
func writeRedacted(w io.Writer, cfg *Config) error {
	c := *cfg
	c.Store.Redis.Addrs = redisstore.RedactAddrs(c.Store.Redis.Addrs) // its own address forms too
	// Many webhook receivers carry their token in the path or the query:
	// only the scheme and host of a webhook URL are printed.
	c.Webhooks = append([]webhook.Config(nil), c.Webhooks...)
	for i := range c.Webhooks {
		c.Webhooks[i].URL = hookOrigin(c.Webhooks[i].URL)
	}
	var doc yaml.Node
	b, err := yaml.Marshal(&c)
	if err == nil {
		err = yaml.Unmarshal(b, &doc)
	}
	if err != nil {
		return fmt.Errorf("printing configuration: %w", err)
	}
	redactNode(&doc, false)
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return fmt.Errorf("printing configuration: %w", err)
	}
	return enc.Close()
}

// secretKeys are the configuration keys whose values are secrets, in any
// section: cookie keys, tokens, passwords, webhook and identity secrets.
// Keys ending in _file name a file, which is no secret.
var secretKeys = map[string]bool{"hash_keys": true, "block_keys": true, "secret": true, "token": true,
	"password": true, "release_token": true}

// redactNode replaces, below n, the values of secretKeys (secret: n is
// one) and the passwords in URLs.
func redactNode(n *yaml.Node, secret bool) {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, c := range n.Content {
			redactNode(c, secret)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			redactNode(n.Content[i+1], secret || secretKeys[n.Content[i].Value])
		}
	case yaml.ScalarNode:
		switch {
		case n.Value == "":
		case secret:
			n.Value, n.Style = redacted, 0
		default:
			n.Value = redactURL(n.Value)
		}
	}
}

// hookOrigin is a webhook URL with only its scheme and host left (and
// "/…" where it had more); a value that does not parse, all of it hidden.
func hookOrigin(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return redacted
	}
	out := u.Scheme + "://" + u.Host
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" {
		out += "/…"
	}
	return out
}

// redactURL is s with the password of a URL it holds replaced ("xxxxx",
// as url.URL.Redacted and the Redis addresses in logs spell it); a bare
// user part, which may be a token, likewise. Any other value as it is.
func redactURL(s string) string {
	if !strings.Contains(s, "@") || !strings.Contains(s, "://") {
		return s
	}
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	if _, ok := u.User.Password(); !ok {
		u.User = url.User("xxxxx")
		return u.String()
	}
	return u.Redacted()
}

// redisLog takes go-redis' own messages (a pool that cannot dial, say) to
// zap at debug: the gate already logs an outage once, when it starts and
// when it ends, and a down Redis must not write a line per request.
type redisLog struct{ log *zap.Logger }

func (l redisLog) Printf(_ context.Context, format string, v ...any) {
	if ce := l.log.Check(zap.DebugLevel, "go-redis"); ce != nil {
		ce.Write(zap.String("message", fmt.Sprintf(format, v...)))
	}
}
