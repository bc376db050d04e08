package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version is the release of ndarrow; builds from a checkout add the VCS revision.
const version = "0.1.0-dev"

func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) int {
	if code, ok := parseArgs(flag.NewFlagSet("version", flag.ContinueOnError), "version", args, stdout, stderr, 0, 0); !ok {
		return code
	}
	fmt.Fprintf(stdout, "ndarrow %s%s %s %s/%s\n", version, revision(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return exitOK
}

// revision returns " (rev abcdef123456)" when the binary was built from a VCS checkout, with
// "+dirty" for uncommitted changes, and "" otherwise.
func revision() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev == "" {
		return ""
	}
	return fmt.Sprintf(" (rev %.12s%s)", rev, dirty)
}
