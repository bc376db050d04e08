package ndbeam

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/internal/objstore"
)

// sink is where Write's files go: a local directory, or a prefix of objects.
type sink interface {
	// join names a file under the sink's root.
	join(elem ...string) string
	// create returns a writer of a new file at name, whole only once closed.
	create(ctx context.Context, name string) (sinkFile, error)
	// rename names the file from to; a from that is gone and a to that is there is done
	// already (a retried step).
	rename(ctx context.Context, from, to string) error
	// parts lists the files directly under the root whose base names match pattern.
	parts(ctx context.Context, pattern string) ([]string, error)
	// removeAll removes the folder (every object under the prefix) at name.
	removeAll(ctx context.Context, name string) error
	// exists reports whether there is a file at name.
	exists(ctx context.Context, name string) (bool, error)
}

// sinkFile is a file being written.
type sinkFile interface {
	io.Writer
	io.Seeker // where the file is: an Arrow IPC file's writer asks
	Name() string
	Close() error // ends the file, whole
	Abort()       // leaves no file, or what was written
}

// sinkOf returns the sink of dir: objects for a URI (s3://, gs://), else a local directory.
func sinkOf(dir string) sink {
	if dataset.IsURI(dir) {
		return objects(strings.TrimRight(dir, "/"))
	}
	return localDir(dir)
}

// localDir is a local directory.
type localDir string

func (d localDir) join(elem ...string) string {
	return filepath.Join(append([]string{string(d)}, elem...)...)
}

func (d localDir) create(_ context.Context, name string) (sinkFile, error) {
	if err := os.MkdirAll(filepath.Dir(name), 0o777); err != nil {
		return nil, err
	}
	f, err := os.Create(name)
	if err != nil {
		return nil, err
	}
	return localFile{f}, nil
}

func (d localDir) rename(_ context.Context, from, to string) error {
	err := os.Rename(from, to)
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Stat(to); serr == nil {
			return nil
		}
	}
	return err
}

func (d localDir) parts(_ context.Context, pattern string) ([]string, error) {
	return filepath.Glob(filepath.Join(string(d), pattern))
}

func (d localDir) exists(_ context.Context, name string) (bool, error) {
	_, err := os.Stat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

func (d localDir) removeAll(_ context.Context, name string) error {
	if err := os.RemoveAll(name); err != nil {
		return err
	}
	// The temporary folder itself, unless another job's files are in it.
	err := os.Remove(filepath.Dir(name))
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTEMPTY) && !errors.Is(err, syscall.EEXIST) {
		return err
	}
	return nil
}

// localFile is a file of a local directory.
type localFile struct{ *os.File }

func (f localFile) Close() error {
	err := f.File.Sync()
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	return err
}

func (f localFile) Abort() { f.File.Close() } // left in the temporary folder, which goes

// objects is a prefix of objects: a rename is a copy within the store and a delete.
type objects string

func (o objects) join(elem ...string) string { return string(o) + "/" + path.Join(elem...) }

func (o objects) create(ctx context.Context, name string) (sinkFile, error) {
	w, err := objstore.Create(ctx, name)
	if err != nil {
		return nil, err
	}
	return objectFile{w, name}, nil
}

func (o objects) rename(ctx context.Context, from, to string) error {
	err := objstore.Copy(ctx, from, to)
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := objstore.Open(ctx, to); serr == nil {
			return nil
		}
		return err
	}
	if err != nil {
		return err
	}
	return objstore.Remove(ctx, from)
}

func (o objects) exists(ctx context.Context, name string) (bool, error) {
	_, err := objstore.Open(ctx, name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

func (o objects) parts(ctx context.Context, pattern string) ([]string, error) {
	objs, err := objstore.List(ctx, string(o)+"/")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, obj := range objs {
		rel := strings.TrimPrefix(obj.URI.String(), string(o)+"/")
		if ok, _ := path.Match(pattern, rel); ok && !strings.Contains(rel, "/") {
			out = append(out, obj.URI.String())
		}
	}
	return out, nil
}

func (o objects) removeAll(ctx context.Context, name string) error {
	objs, err := objstore.List(ctx, name+"/")
	if err != nil {
		return err
	}
	for _, obj := range objs {
		if err := objstore.Remove(ctx, obj.URI.String()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// objectFile is an object being uploaded.
type objectFile struct {
	*objstore.Writer
	name string
}

func (f objectFile) Name() string { return f.name }

func (f objectFile) Abort() { _ = f.Writer.Abort() }

// describe names what a sink error is about.
func describe(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("ndbeam: %w", err)
}
