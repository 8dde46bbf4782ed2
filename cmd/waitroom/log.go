package main

import (
	"context"
	"fmt"
	"io"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.yaml.in/yaml/v3"

	"github.com/waitroom/waitroom/waitroom/redisstore"
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
// secret replaced, so it can be pasted into a ticket or a chat.
func writeRedacted(w io.Writer, cfg *Config) error {
	c := *cfg
	c.Cookie.HashKeys = redactAll(c.Cookie.HashKeys)
	c.Cookie.BlockKeys = redactAll(c.Cookie.BlockKeys)
	if c.Bypass.Header.Secret != "" {
		c.Bypass.Header.Secret = redacted
	}
	if c.Admin.Token != "" {
		c.Admin.Token = redacted
	}
	if c.Store.Redis.Password != "" {
		c.Store.Redis.Password = redacted
	}
	c.Store.Redis.Addrs = redisstore.RedactAddrs(c.Store.Redis.Addrs)
	rooms := make(map[string]RoomConfig, len(c.Rooms))
	for name, rc := range c.Rooms {
		if rc.Identity.Secret != "" {
			rc.Identity.Secret = redacted
		}
		rooms[name] = rc
	}
	c.Rooms = rooms
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(c); err != nil {
		return fmt.Errorf("printing configuration: %w", err)
	}
	return enc.Close()
}

func redactAll(in []string) []string {
	out := make([]string, len(in))
	for i := range in {
		out[i] = redacted
	}
	return out
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
