package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// logFlags are serve's --log-level and --log-format.
type logFlags struct {
	level, format *string
}

func addLogFlags(fs *flag.FlagSet) logFlags {
	return logFlags{
		level:  fs.String("log-level", "info", "the least severe records the log on stderr holds: debug (also a line per flight at start, health checks, the status when unchanged), info (a line per call, the budgets in use every minute when changed), warn or error"),
		format: fs.String("log-format", "text", "the log's format on stderr: text (key=value) or json (one object a line)"),
	}
}

// logLevels are the values of --log-level.
var logLevels = map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}

// logger returns the logger the flags ask for, writing to stderr.
func (f logFlags) logger(stderr io.Writer) (*slog.Logger, error) {
	level, ok := logLevels[strings.ToLower(*f.level)]
	if !ok {
		return nil, fmt.Errorf("--log-level %q: not debug, info, warn or error", *f.level)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch strings.ToLower(*f.format) {
	case "text":
		return slog.New(slog.NewTextHandler(stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(stderr, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: not text or json", *f.format)
}
