// Package s3test starts a real S3-compatible object store for tests: the Versity S3 Gateway
// (versitygw) over a temporary directory, on 127.0.0.1, with the AWS environment variables
// pointing the process's S3 clients at it. Tests that need it are skipped, with the command
// that installs it, only when its binary is absent.
package s3test

import (
	"context"
	"io"
	"net"
	"net/http"
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

// Install is the command that installs the server's binary where Binary finds it.
const Install = "go install github.com/versity/versitygw/cmd/versitygw@v1.8.0"

// The credentials of the store's root account.
const (
	AccessKey = "ndarrowtest"
	SecretKey = "ndarrowtestsecret"
)

// Binary returns the path of the versitygw binary: $NDARROW_VERSITYGW, versitygw on PATH, or
// in $GOBIN or $GOPATH/bin (where Install puts it); "" when there is none.
func Binary() string {
	if p := os.Getenv("NDARROW_VERSITYGW"); p != "" {
		return p
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
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
		if p := filepath.Join(d, "versitygw"); fileExists(p) {
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

// Start starts a store for the test, stopped when it ends, with one bucket per name in
// buckets, and sets AWS_ENDPOINT_URL_S3, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
// AWS_REGION for the test (t.Setenv: not for parallel tests). It skips the test when there is
// no binary.
func Start(t testing.TB, buckets ...string) *Server {
	t.Helper()
	bin := Binary()
	if bin == "" {
		t.Skipf("no versitygw binary: install it with %q (or set NDARROW_VERSITYGW)", Install)
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
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(s.Endpoint)
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(logs.Name())
			t.Fatalf("versitygw did not answer on %s: %v\n%s", addr, err, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
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
