// Command waitroom is a virtual waiting room: a reverse proxy that lets
// through only as many visitors as a site can serve and queues the rest.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/waitroom/waitroom/waitroom/conf"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = "dev"

const defaultConfigPath = "configs/waitroom.yaml"

const usage = `waitroom: a virtual waiting room in front of a web site.

Usage:
  waitroom [serve] [--config FILE]   run the gateway (default config: configs/waitroom.yaml)
  waitroom check [--config FILE]     validate the config and print it, secrets redacted
  waitroom demo [--listen ADDR]      run a demo site behind a tiny room (2 inside, 6 per minute)
  waitroom schema                    print the configuration's JSON Schema
  waitroom version                   print the version (also --version)

Each command's own flags: waitroom COMMAND --help. Every key of the
configuration file is documented in configs/waitroom.yaml.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmd, named := "serve", false
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args, named = args[0], args[1:], true
	}
	// At the top level, --version and --help are what they are anywhere
	// else, not serve's flags; after "serve", --help is serve's own.
	if cmd == "serve" && !named && len(args) > 0 {
		switch args[0] {
		case "--version", "-version", "-v":
			cmd, args = "version", args[1:]
		case "--help", "-help", "-h":
			cmd, args = "help", args[1:]
		}
	}
	var err error
	switch cmd {
	case "serve":
		err = cmdServe(ctx, args, stderr)
	case "check":
		err = cmdCheck(args, stdout, stderr)
	case "demo":
		err = cmdDemo(ctx, args, stdout, stderr)
	case "schema":
		err = cmdSchema(args, stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, "waitroom", buildVersion())
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "waitroom: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
	if err == nil {
		return 0
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintln(stderr, "waitroom:", err)
	var usageErr *usageError
	if errors.As(err, &usageErr) {
		return 2
	}
	return 1
}

type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }

func configFlag(name string, args []string, stderr io.Writer) (string, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", defaultConfigPath, "configuration file (YAML)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", err
		}
		return "", &usageError{err}
	}
	if fs.NArg() > 0 {
		return "", &usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	return *path, nil
}

func cmdServe(ctx context.Context, args []string, stderr io.Writer) error {
	path, err := configFlag("serve", args, stderr)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(path)
	if err != nil {
		return err
	}
	log, err := newLogger(cfg.Log)
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()
	app, err := NewApp(cfg, log)
	if err != nil {
		return err
	}
	defer app.Close()
	app.WatchFile(path)
	return app.Run(ctx)
}

func cmdCheck(args []string, stdout, stderr io.Writer) error {
	path, err := configFlag("check", args, stderr)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(path)
	if err != nil {
		return err
	}
	// As a gateway would start: ask the sentinels or the Cluster how long
	// a failover takes (bounded; a check that cannot reach them still
	// passes, and says so in its warnings).
	// go-redis's own log of the refused dials would repeat the warning.
	redis.SetLogger(redisLog{zap.NewNop()})
	cfg.useFailover(learnFailover(cfg.Store))
	fmt.Fprintf(stdout, "%s: configuration OK\n", path)
	fmt.Fprintf(stdout, "store.open_after: %s (%s)\n", conf.Short(cfg.openAfter), cfg.openAfterSource())
	for _, w := range cfg.warnings {
		fmt.Fprintf(stdout, "warning: %s\n", w)
	}
	fmt.Fprintln(stdout)
	// The configuration as it runs: the effective open_after, not "".
	printed := *cfg.Config
	printed.Store.OpenAfter = conf.Short(cfg.openAfter)
	return writeRedacted(stdout, &printed)
}

func buildVersion() string {
	if version != "dev" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return version
	}
	return versionFrom(bi)
}

// versionFrom is the version a build without -X main.version reports:
// the module's, or the commit it was built from.
func versionFrom(bi *debug.BuildInfo) string {
	if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	// A build from a checkout: name its commit, so a bug report says
	// which code ran.
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = ", modified"
			}
		}
	}
	if rev == "" {
		return version
	}
	return fmt.Sprintf("%s (%.12s%s)", version, rev, modified)
}
