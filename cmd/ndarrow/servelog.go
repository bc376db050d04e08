package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
)

// logFlags are serve's --log-level and --log-format.
type logFlags struct {
	level, format *string
}

func addLogFlags(fs *flag.FlagSet) logFlags {
	return logFlags{
		level:  fs.String("log-level", "info", "the least severe `LEVEL` of the records the log on stderr holds: debug (also a line per flight at start, health checks, the status when unchanged), info (a line per call, the budgets in use every minute when changed), warn or error"),
		format: fs.String("log-format", "text", "the log's `FORMAT` on stderr: text (key=value) or json (one object a line)"),
	}
}

// logLevels are the values of --log-level.
var logLevels = map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}

// open returns the logger the flags ask for, writing to stderr, and where serve writes its
// own lines for stderr (what it skips, leaves out, cannot follow): stderr itself in text, the
// log in JSON (each line a record at warn), so that every line there is one object.
func (f logFlags) open(stderr io.Writer) (*slog.Logger, io.Writer, error) {
	level, ok := logLevels[strings.ToLower(*f.level)]
	if !ok {
		return nil, nil, fmt.Errorf("--log-level %q: not debug, info, warn or error", *f.level)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch strings.ToLower(*f.format) {
	case "text":
		return slog.New(slog.NewTextHandler(stderr, opts)), stderr, nil
	case "json":
		logger := slog.New(slog.NewJSONHandler(stderr, opts))
		return logger, &logLines{log: logger}, nil
	}
	return nil, nil, fmt.Errorf("--log-format %q: not text or json", *f.format)
}

// logLines writes each line written to it as a record of log at warn, its text the message.
type logLines struct {
	log     *slog.Logger
	mu      sync.Mutex
	partial []byte // a line not yet ended
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		line, rest, ok := bytes.Cut(l.partial, []byte("\n"))
		if !ok {
			break
		}
		l.log.Warn(string(line))
		l.partial = append(l.partial[:0], rest...)
	}
	return len(p), nil
}
