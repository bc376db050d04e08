package objstore

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/logging"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// s3Objects is the store of s3:// URIs: the AWS SDK's S3 client, configured as every AWS
// SDK and CLI is (the credential chain: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE
// and the shared config files, web identity, SSO, container and instance roles; AWS_REGION;
// AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL for an S3-compatible store, addressed path-style
// since such stores rarely serve bucket subdomains).
type s3Objects struct{ c *s3.Client }

// s3Clients caches a client per environment that configures one.
var s3Clients struct {
	sync.Mutex
	byEnv map[string]*s3.Client
}

// s3Env lists the environment variables a client depends on beyond the shared files.
var s3Env = []string{"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"}

// s3Store returns the S3 store for the environment as it is now.
func s3Store(ctx context.Context) (store, error) {
	var key strings.Builder
	for _, name := range s3Env {
		key.WriteString(os.Getenv(name))
		key.WriteByte(0)
	}
	s3Clients.Lock()
	defer s3Clients.Unlock()
	if c := s3Clients.byEnv[key.String()]; c != nil {
		return s3Objects{c}, nil
	}
	for _, name := range []string{"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"} {
		if err := checkEndpoint(name, os.Getenv(name)); err != nil {
			return nil, err
		}
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("s3: configuration: %w", redacted(err))
	}
	cfg.HTTPClient = boundedDoer{cfg.HTTPClient} // the SDK's client, AWS_CA_BUNDLE's roots and all
	cfg.Logger = logging.Nop{}                   // what goes wrong is in the errors, one line each
	if cfg.Region == "" {
		cfg.Region = "us-east-1" // what S3 assumes of a request that names none
	}
	pathStyle := os.Getenv("AWS_ENDPOINT_URL_S3") != "" || os.Getenv("AWS_ENDPOINT_URL") != ""
	c := s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.UsePathStyle = pathStyle
		// Checksums of ranged reads cannot be verified; parts are checked by Content-MD5-less
		// CRCs only where the store asks (many S3-compatible stores do not know them).
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	if s3Clients.byEnv == nil {
		s3Clients.byEnv = map[string]*s3.Client{}
	}
	s3Clients.byEnv[key.String()] = c
	return s3Objects{c}, nil
}

// checkEndpoint returns why the value v of the environment variable name is not an
// endpoint's URL (http:// or https://, a host, no user information), or nil. The error
// shows no more of v than its scheme and host.
func checkEndpoint(name, v string) error {
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("s3: %s is not an http:// or https:// URL of a host: %w", name, fs.ErrInvalid)
	case u.User != nil:
		return fmt.Errorf("s3: %s=%s://%s…: user information in the URL (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY hold credentials): %w", name, u.Scheme, u.Host, fs.ErrInvalid)
	}
	return nil
}

// s3Error returns the error of a failed S3 call about u (what: open, read, list, write).
func s3Error(u URI, what string, ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil {
		return named(u, fmt.Errorf("%s: %w", what, cause))
	}
	var tooLong *answerTooLong
	if errors.As(err, &tooLong) { // the SDK's decoders read no further than the bound
		return named(u, fmt.Errorf("%s: %w", what, tooLong))
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.HTTPStatusCode()/100 == 2 { // an answer that does not decode
		return named(u, fmt.Errorf("%s: the store's answer: %w", what, redacted(re.Err)))
	}
	if errors.As(err, &re) && re.HTTPStatusCode() != 0 {
		code := ""
		var api smithy.APIError
		if errors.As(err, &api) {
			code = api.ErrorCode()
		}
		return statusError(u, what, re.HTTPStatusCode(), code)
	}
	var ne *net.OpError
	if errors.As(err, &ne) { // the connection failed, after the SDK's retries
		return named(u, fmt.Errorf("%s: %w", what, ne))
	}
	var oe *smithy.OperationError
	if errors.As(err, &oe) {
		err = oe.Err // its text repeats the service and operation
	}
	return named(u, fmt.Errorf("%s: %w", what, redacted(err))) // the SDK's text may hold the endpoint's URL
}

func (s s3Objects) head(ctx context.Context, u URI) (Info, error) {
	if u.Key == "" || strings.HasSuffix(u.Key, "/") {
		return Info{}, named(u, fmt.Errorf("%w (a bucket or prefix, not an object)", errNoObject))
	}
	wctx, g := watch(ctx)
	defer g.stop()
	out, err := s.c.HeadObject(wctx, &s3.HeadObjectInput{Bucket: &u.Bucket, Key: &u.Key})
	if err != nil {
		return Info{}, s3Error(u, "open", wctx, err)
	}
	info := Info{URI: u, Size: aws.ToInt64(out.ContentLength), Version: aws.ToString(out.ETag)}
	if out.LastModified != nil {
		info.ModTime = *out.LastModified
	}
	if info.Size < 0 {
		return Info{}, named(u, fmt.Errorf("open: the store says %d bytes", info.Size))
	}
	return info, nil
}

func (s s3Objects) read(ctx context.Context, info Info, off int64, p []byte) error {
	end := off + int64(len(p)) - 1
	in := &s3.GetObjectInput{Bucket: &info.URI.Bucket, Key: &info.URI.Key, Range: aws.String(fmt.Sprintf("bytes=%d-%d", off, end))}
	if info.Version != "" {
		in.IfMatch = aws.String(info.Version)
	}
	wctx, g := watch(ctx)
	defer g.stop()
	out, err := s.c.GetObject(wctx, in)
	if err != nil {
		return s3Error(info.URI, "read", wctx, err)
	}
	defer out.Body.Close()
	a := answer{status: http.StatusPartialContent, contentRange: aws.ToString(out.ContentRange), length: -1, version: aws.ToString(out.ETag), versionName: "ETag"}
	if raw, ok := awsmiddleware.GetRawResponse(out.ResultMetadata).(*smithyhttp.Response); ok {
		a.status = raw.StatusCode
	}
	if out.ContentLength != nil {
		a.length = *out.ContentLength
	}
	if err := a.check(info, off, int64(len(p))); err != nil {
		return named(info.URI, err)
	}
	if err := readFull(wctx, out.Body, p); err != nil {
		return readError(info.URI, off, len(p), err)
	}
	return nil
}

// maxListed bounds a listing: a prefix of more objects is refused rather than described.
const maxListed = 1 << 20

func (s s3Objects) list(ctx context.Context, u URI) ([]Info, error) {
	in := &s3.ListObjectsV2Input{Bucket: &u.Bucket}
	if u.Key != "" {
		in.Prefix = &u.Key
	}
	var out []Info
	pages := s3.NewListObjectsV2Paginator(s.c, in)
	for pages.HasMorePages() {
		wctx, g := watch(ctx)
		page, err := pages.NextPage(wctx)
		if err != nil {
			err = s3Error(u, "list", wctx, err) // before stop cancels wctx
		}
		g.stop()
		if err != nil {
			return nil, err
		}
		for _, o := range page.Contents {
			key := aws.ToString(o.Key)
			if strings.HasSuffix(key, "/") {
				continue // a folder marker
			}
			info := Info{URI: u.Child(key), Size: aws.ToInt64(o.Size), Version: aws.ToString(o.ETag)}
			if o.LastModified != nil {
				info.ModTime = *o.LastModified
			}
			out = append(out, info)
		}
		if len(out) > maxListed {
			return nil, named(u, fmt.Errorf("list: more than %d objects", maxListed))
		}
	}
	return out, nil
}

// s3Upload is an S3 multipart upload.
type s3Upload struct {
	c  *s3.Client
	u  URI
	id string

	mu    sync.Mutex
	parts []types.CompletedPart
}

func (s s3Objects) create(ctx context.Context, u URI) (upload, error) {
	if u.Key == "" || strings.HasSuffix(u.Key, "/") {
		return nil, named(u, fmt.Errorf("%w (a bucket or prefix, not an object)", ErrNotWritable))
	}
	return &s3Upload{c: s.c, u: u}, nil
}

// start begins the multipart upload, once.
func (up *s3Upload) start(ctx context.Context) error {
	up.mu.Lock()
	defer up.mu.Unlock()
	if up.id != "" {
		return nil
	}
	// Not cancelled with the upload: an upload the store created must be known to be
	// aborted, and a cancellation mid-request would leave it behind, unnamed.
	wctx, g := watch(context.WithoutCancel(ctx))
	defer g.stop()
	out, err := up.c.CreateMultipartUpload(wctx, &s3.CreateMultipartUploadInput{Bucket: &up.u.Bucket, Key: &up.u.Key})
	if err != nil {
		return s3Error(up.u, "write", wctx, err)
	}
	up.id = aws.ToString(out.UploadId)
	return nil
}

func (up *s3Upload) part(ctx context.Context, n int, p []byte) error {
	if err := up.start(ctx); err != nil {
		return err
	}
	wctx, g := watch(ctx)
	defer g.stop()
	out, err := up.c.UploadPart(wctx, &s3.UploadPartInput{
		Bucket: &up.u.Bucket, Key: &up.u.Key, UploadId: &up.id, PartNumber: aws.Int32(int32(n)),
		Body: bytes.NewReader(p), ContentLength: aws.Int64(int64(len(p))),
	})
	if err != nil {
		return s3Error(up.u, fmt.Sprintf("write of part %d", n), wctx, err)
	}
	up.mu.Lock()
	up.parts = append(up.parts, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(int32(n))})
	up.mu.Unlock()
	return nil
}

func (up *s3Upload) complete(ctx context.Context) error {
	up.mu.Lock()
	parts := append([]types.CompletedPart(nil), up.parts...)
	up.mu.Unlock()
	slices.SortFunc(parts, func(a, b types.CompletedPart) int {
		return cmp.Compare(aws.ToInt32(a.PartNumber), aws.ToInt32(b.PartNumber))
	})
	wctx, g := watch(ctx)
	defer g.stop()
	_, err := up.c.CompleteMultipartUpload(wctx, &s3.CompleteMultipartUploadInput{
		Bucket: &up.u.Bucket, Key: &up.u.Key, UploadId: &up.id,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts},
	})
	if err != nil {
		return s3Error(up.u, "write", wctx, err)
	}
	return nil
}

func (up *s3Upload) abort(ctx context.Context) error {
	up.mu.Lock()
	id := up.id
	up.mu.Unlock()
	if id == "" {
		return nil
	}
	// Not under the caller's context, which an interruption may have ended already.
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), StallTimeout)
	defer cancel()
	if _, err := up.c.AbortMultipartUpload(actx, &s3.AbortMultipartUploadInput{Bucket: &up.u.Bucket, Key: &up.u.Key, UploadId: &id}); err != nil {
		return s3Error(up.u, "abort of the upload", actx, err)
	}
	return nil
}

func (up *s3Upload) put(ctx context.Context, p []byte) error {
	wctx, g := watch(ctx)
	defer g.stop()
	_, err := up.c.PutObject(wctx, &s3.PutObjectInput{
		Bucket: &up.u.Bucket, Key: &up.u.Key, Body: bytes.NewReader(p), ContentLength: aws.Int64(int64(len(p))),
	})
	if err != nil {
		return s3Error(up.u, "write", wctx, err)
	}
	return nil
}

// copyPartSize is the size of the parts of a multipart copy, and the largest object copied
// in one CopyObject (S3 copies at most 5 GiB in one).
var copyPartSize int64 = 1 << 30

func (s s3Objects) copy(ctx context.Context, src Info, dst URI) error {
	source := url.PathEscape(src.URI.Bucket) + "/" + escapeKey(src.URI.Key)
	if src.Size <= copyPartSize {
		wctx, g := watch(ctx)
		defer g.stop()
		in := &s3.CopyObjectInput{Bucket: &dst.Bucket, Key: &dst.Key, CopySource: &source}
		if src.Version != "" {
			in.CopySourceIfMatch = aws.String(src.Version)
		}
		if _, err := s.c.CopyObject(wctx, in); err != nil {
			return s3Error(dst, "copy of "+src.URI.String(), wctx, err)
		}
		return nil
	}
	// Larger: a multipart upload whose parts are ranges of the source.
	up := &s3Upload{c: s.c, u: dst}
	if err := up.start(ctx); err != nil {
		return err
	}
	for n, off := 1, int64(0); off < src.Size; n, off = n+1, off+copyPartSize {
		end := min(off+copyPartSize, src.Size) - 1
		wctx, g := watch(ctx)
		in := &s3.UploadPartCopyInput{Bucket: &dst.Bucket, Key: &dst.Key, UploadId: &up.id, PartNumber: aws.Int32(int32(n)),
			CopySource: &source, CopySourceRange: aws.String(fmt.Sprintf("bytes=%d-%d", off, end))}
		if src.Version != "" {
			in.CopySourceIfMatch = aws.String(src.Version)
		}
		out, err := s.c.UploadPartCopy(wctx, in)
		if err != nil {
			err = s3Error(dst, "copy of "+src.URI.String(), wctx, err) // before stop cancels wctx
		}
		g.stop()
		if err != nil {
			_ = up.abort(ctx)
			return err
		}
		if out.CopyPartResult == nil {
			_ = up.abort(ctx)
			return named(dst, fmt.Errorf("copy of %s: the store gave part %d no ETag", src.URI, n))
		}
		up.mu.Lock()
		up.parts = append(up.parts, types.CompletedPart{ETag: out.CopyPartResult.ETag, PartNumber: aws.Int32(int32(n))})
		up.mu.Unlock()
	}
	if err := up.complete(ctx); err != nil {
		_ = up.abort(ctx)
		return err
	}
	return nil
}

// escapeKey escapes a key for a copy source: each part between slashes as a path segment.
func escapeKey(key string) string {
	parts := strings.Split(key, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}

func (s s3Objects) remove(ctx context.Context, u URI) error {
	if _, err := s.head(ctx, u); err != nil { // S3 deletes what is not there without a word
		return err
	}
	wctx, g := watch(ctx)
	defer g.stop()
	if _, err := s.c.DeleteObject(wctx, &s3.DeleteObjectInput{Bucket: &u.Bucket, Key: &u.Key}); err != nil {
		return s3Error(u, "delete", wctx, err)
	}
	return nil
}
