package flight

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/ndarrow/ndarrow/dataset"
)

// Watch timing: a burst of changes is rescanned once it has been quiet for settleTime, and at
// least every maxDelay while it lasts (a large file being copied in).
const (
	settleTime = 100 * time.Millisecond
	maxDelay   = 500 * time.Millisecond
)

// DefaultPollInterval is how often Watch lists a prefix of objects again, unless
// SetPollInterval says otherwise.
const DefaultPollInterval = 10 * time.Second

// SetPollInterval sets how often Watch lists a prefix of objects for changes (d ≤ 0: the
// default). Call it before Watch.
func (s *Store) SetPollInterval(d time.Duration) { s.poll.Store(int64(d)) }

// pollInterval returns the interval SetPollInterval set, or the default.
func (s *Store) pollInterval() time.Duration {
	if d := time.Duration(s.poll.Load()); d > 0 {
		return d
	}
	return DefaultPollInterval
}

// Watch follows the directories added with AddDir until ctx is done: it watches them and
// their subdirectories for change notifications (fsnotify: inotify on Linux, kqueue on BSD
// and macOS, ReadDirectoryChangesW on Windows) and calls Rescan once a burst of changes has
// been quiet for a tenth of a second (at least every half second while it lasts), then
// report with what Rescan returned. A prefix of objects (dataset.IsURI), of which a store
// sends no notifications, is listed again every PollInterval instead. It returns nil when
// ctx ends, or an error when the directories cannot be watched at all. A file system that
// sends no notifications (some network and FUSE mounts) needs Rescan called by other means
// (the "reload" action, SIGHUP in the CLI).
func (s *Store) Watch(ctx context.Context, report func(Changes, error)) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("flight: watching: %w", err)
	}
	defer w.Close()
	var poll <-chan time.Time
	for _, dir := range s.Dirs() {
		if dataset.IsURI(dir) {
			if poll == nil {
				t := time.NewTicker(s.pollInterval())
				defer t.Stop()
				poll = t.C
			}
			continue
		}
		if err := watchTree(w, dir); err != nil {
			return fmt.Errorf("flight: watching %w", err)
		}
	}
	s.watching.Add(1)
	defer s.watching.Add(-1)
	var (
		timer    = time.NewTimer(time.Hour)
		pending  bool
		deadline time.Time
	)
	timer.Stop()
	defer timer.Stop()
	touched := func() {
		now := time.Now()
		if !pending {
			pending, deadline = true, now.Add(maxDelay)
		}
		timer.Reset(min(settleTime, max(0, deadline.Sub(now))))
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if hidden(ev.Name) {
				continue // a temporary file being written, say: the rename will tell
			}
			if ev.Has(fsnotify.Create) {
				// a new subdirectory: watch it (and whatever was put in it already)
				_ = watchTree(w, ev.Name)
			}
			touched()
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				touched() // notifications were lost: the rescan sees everything
				continue
			}
			report(Changes{}, fmt.Errorf("flight: watching: %w", err))
		case <-timer.C:
			pending = false
			report(s.Rescan())
		case <-poll:
			report(s.Rescan())
		}
	}
}

// watchTree adds dir and every subdirectory under it that a directory dataset reads (not the
// hidden and underscore ones) to w. A path that is not a directory is no error.
func watchTree(w *fsnotify.Watcher, dir string) error {
	return filepath.WalkDir(dir, func(path string, de fs.DirEntry, err error) error {
		switch {
		case err != nil && path == dir:
			if errors.Is(err, fs.ErrNotExist) {
				return nil // gone already
			}
			return err
		case err != nil:
			return nil
		case !de.IsDir():
			return nil
		case path != dir && hidden(path):
			return filepath.SkipDir
		}
		if err := w.Add(path); err != nil && path == dir {
			return fmt.Errorf("%s: %w", path, err)
		}
		return nil
	})
}

// hidden reports whether the base name of path is one a directory dataset leaves out.
func hidden(path string) bool {
	base := filepath.Base(path)
	return strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_")
}

// rescanHint returns what a client told that a file of e changed under its read may do: of a
// served directory's file, fetch again once the store has seen the change — which a Watch
// running sees by itself, and a store not watched at a rescan (serve's SIGHUP, the "reload"
// action); "" for a flight of no directory.
func (s *Store) rescanHint(e *entry) string {
	switch {
	case e.root == "":
		return ""
	case s.watching.Load() > 0:
		return " (fetch it again: the server serves the new version once it sees the change)"
	}
	return " (the server does not watch its directory: once the file is whole, send ndarrow serve SIGHUP or the reload action, then fetch it again)"
}
