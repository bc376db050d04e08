// Package storetest starts object stores for tests, on 127.0.0.1, with the environment
// variables pointing the process's clients at them: a real S3-compatible store, the Versity S3
// Gateway (versitygw) over a temporary directory (StartS3), and the Google Cloud Storage
// emulator fake-gcs-server (StartGCS). Tests that need one are skipped, with the command that
// installs it, only when its binary is absent.
package storetest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Install is the command that installs versitygw where Binary finds it.
const Install = "go install github.com/versity/versitygw/cmd/versitygw@v1.8.0"

// InstallGCS is the command that installs fake-gcs-server where Binary finds it.
const InstallGCS = "go install github.com/fsouza/fake-gcs-server@v1.56.1"

// The credentials of the store's root account.
const (
	AccessKey = "ndarrowtest"
	SecretKey = "ndarrowtestsecret"
)

// Binary returns the path of the binary named name (versitygw, fake-gcs-server): on PATH, or
// in $GOBIN or $GOPATH/bin (where Install puts it); "" when there is none.
func Binary(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	var dirs []string
	if d := os.Getenv("GOBIN"); d != "" {
		dirs = append(dirs, d)
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		for _, d := range filepath.SplitList(strings.TrimSpace(string(out))) {
			dirs = append(dirs, filepath.Join(d, "bin"))
		}
	}
	for _, d := range dirs {
		if p := filepath.Join(d, name); fileExists(p) {
			return p
		}
	}
	return ""
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// Server is a running store.
type Server struct {
	Endpoint string // http://127.0.0.1:PORT
	Root     string // the directory whose subdirectories are the buckets
	Client   *s3.Client
	cmd      *exec.Cmd
}

// StartS3 starts versitygw for the test, stopped when it ends, with one bucket per name in
// buckets, and sets AWS_ENDPOINT_URL_S3, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
// AWS_REGION for the test (t.Setenv: not for parallel tests). It skips the test when there is
// no binary.
func StartS3(t testing.TB, buckets ...string) *Server {
	t.Helper()
	bin := Binary("versitygw")
	if bin == "" {
		t.Skipf("no versitygw binary: install it with %q", Install)
	}
	root := t.TempDir()
	addr := freeAddr(t)
	cmd := exec.Command(bin, "--port", addr, "posix", root)
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+AccessKey, "ROOT_SECRET_KEY="+SecretKey)
	logs, err := os.Create(filepath.Join(t.TempDir(), "versitygw.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	s := &Server{Endpoint: "http://" + addr, Root: root, cmd: cmd}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
		logs.Close()
	})
	waitFor(t, s.Endpoint, logs.Name())
	t.Setenv("AWS_ENDPOINT_URL_S3", s.Endpoint)
	t.Setenv("AWS_ENDPOINT_URL", "")
	t.Setenv("AWS_ACCESS_KEY_ID", AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", SecretKey)
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(root, ".no-aws-config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(root, ".no-aws-credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	s.Client = s3.New(s3.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(s.Endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(AccessKey, SecretKey, ""),
	})
	for _, b := range buckets {
		s.CreateBucket(t, b)
	}
	return s
}

// Stop kills the store: every request after fails to connect.
func (s *Server) Stop() {
	_ = s.cmd.Process.Kill()
	_, _ = s.cmd.Process.Wait()
}

// waitFor waits until a server answers at url, failing t with its log after 20 s.
func waitFor(t testing.TB, url, log string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			return
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(log)
			t.Fatalf("the store did not answer at %s: %v\n%s", url, err, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// GCS is a running Google Cloud Storage emulator.
type GCS struct {
	Endpoint string // http://127.0.0.1:PORT
	cmd      *exec.Cmd
}

// StartGCS starts fake-gcs-server (in memory) for the test, stopped when it ends, with one
// bucket per name in buckets, and sets STORAGE_EMULATOR_HOST for the test. It skips the test
// when there is no binary.
func StartGCS(t testing.TB, buckets ...string) *GCS {
	t.Helper()
	bin := Binary("fake-gcs-server")
	if bin == "" {
		t.Skipf("no fake-gcs-server binary: install it with %q", InstallGCS)
	}
	addr := freeAddr(t)
	host, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, "-scheme", "http", "-host", host, "-port", port, "-backend", "memory",
		"-public-host", addr, "-external-url", "http://"+addr, "-log-level", "warn")
	logs, err := os.Create(filepath.Join(t.TempDir(), "fake-gcs-server.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	g := &GCS{Endpoint: "http://" + addr, cmd: cmd}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
		logs.Close()
	})
	waitFor(t, g.Endpoint+"/storage/v1/b", logs.Name())
	t.Setenv("STORAGE_EMULATOR_HOST", addr)
	for _, b := range buckets {
		resp, err := http.Post(g.Endpoint+"/storage/v1/b", "application/json", strings.NewReader(`{"name":"`+b+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("creating bucket %s: %s", b, resp.Status)
		}
	}
	return g
}

// Put writes an object.
func (g *GCS) Put(t testing.TB, bucket, key string, data []byte) {
	t.Helper()
	resp, err := http.Post(g.Endpoint+"/upload/storage/v1/b/"+bucket+"/o?uploadType=media&name="+url.QueryEscape(key), "application/octet-stream", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("putting gs://%s/%s: %s", bucket, key, resp.Status)
	}
}

// Get returns an object's bytes, or an error.
func (g *GCS) Get(bucket, key string) ([]byte, error) {
	resp, err := http.Get(g.Endpoint + "/storage/v1/b/" + bucket + "/o/" + url.PathEscape(key) + "?alt=media")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("gs://%s/%s: %s", bucket, key, resp.Status)
	}
	return io.ReadAll(resp.Body)
}

// freeAddr returns a 127.0.0.1 address nothing listens on.
func freeAddr(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// CreateBucket creates a bucket.
func (s *Server) CreateBucket(t testing.TB, name string) {
	t.Helper()
	if _, err := s.Client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: &name}); err != nil {
		t.Fatalf("creating bucket %s: %v", name, err)
	}
}

// Put writes an object.
func (s *Server) Put(t testing.TB, bucket, key string, data []byte) {
	t.Helper()
	_, err := s.Client.PutObject(context.Background(), &s3.PutObjectInput{
		Bucket: &bucket, Key: &key, Body: strings.NewReader(string(data)), ContentLength: aws.Int64(int64(len(data))),
	})
	if err != nil {
		t.Fatalf("putting s3://%s/%s: %v", bucket, key, err)
	}
}

// PutFile uploads the local file at path as an object.
func (s *Server) PutFile(t testing.TB, bucket, key, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s.Put(t, bucket, key, b)
}

// Get returns an object's bytes, or an error.
func (s *Server) Get(bucket, key string) ([]byte, error) {
	out, err := s.Client.GetObject(context.Background(), &s3.GetObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		return nil, err
	}
	defer out.Body.Close()
	return io.ReadAll(out.Body)
}

// Keys lists the keys of a bucket's objects, and of its incomplete multipart uploads.
func (s *Server) Keys(t testing.TB, bucket string) (objects, uploads []string) {
	t.Helper()
	ctx := context.Background()
	out, err := s.Client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &bucket})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range out.Contents {
		objects = append(objects, aws.ToString(o.Key))
	}
	ups, err := s.Client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: &bucket})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range ups.Uploads {
		uploads = append(uploads, aws.ToString(u.Key))
	}
	return objects, uploads
}
