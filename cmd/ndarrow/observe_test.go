package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// servedGolden returns a directory holding batch_tensors.arrow (the table batch_tensors of 4
// rows and its columns).
func servedGolden(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join(golden, "batch_tensors.arrow"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "batch_tensors.arrow"), b, 0o644))
	return dir
}

// jsonRecords parses serve's standard error in --log-format json: every line one object.
func jsonRecords(t *testing.T, stderr string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if line == "" {
			continue
		}
		var r map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &r), "every line on stderr is a JSON record: %q", line)
		out = append(out, r)
	}
	return out
}

// awaitJSONRecord waits for the record of serve s whose attributes hold want (compared as
// fmt.Sprint prints them; "msg" a prefix when it ends with "…"), and returns it.
func awaitJSONRecord(t *testing.T, stderr *syncBuffer, want map[string]string) map[string]any {
	t.Helper()
	var found map[string]any
	require.Eventually(t, func() bool {
		for _, r := range jsonRecords(t, stderr.String()) {
			ok := true
			for k, v := range want {
				got := fmt.Sprint(r[k])
				if prefix, cut := strings.CutSuffix(v, "…"); cut && !strings.HasPrefix(got, prefix) || !cut && got != v {
					ok = false
					break
				}
			}
			if ok {
				found = r
				return true
			}
		}
		return false
	}, 10*time.Second, 10*time.Millisecond, "no record %v in the log:\n%s", want, stderr.String())
	return found
}

// TestServeLogsOneRecordPerCall: serve --log-format json writes one JSON object a line on
// standard error, a record per call — ls, get by data URL and by DoGet, get --rows, a refused
// token — naming the method, the flight, the client, the token's identity, bytes, rows,
// duration and status, the token itself nowhere; the banner on standard output says the
// counts only; a client sending the token in clear says so on its standard error, once.
func TestServeLogsOneRecordPerCall(t *testing.T) {
	const token = "t0k-of-the-test"
	s := startServe(t, servedGolden(t), "--log-format", "json", "--token", token)
	assert.True(t, strings.HasPrefix(s.stdout.String(), "serving 5 tensors and 1 table from "), s.stdout.String())
	assert.NotContains(t, s.stdout.String(), "  batch_tensors", "no line per flight at info")
	sum := sha256.Sum256([]byte(token))
	id := "token:" + hex.EncodeToString(sum[:3])
	out := t.TempDir()
	inClear := "ndarrow %s: the token goes to " + s.uri + " in clear (no TLS): anyone on the network path can read it; dial grpc+tls:// beyond loopback or a trusted network\n"

	for _, tc := range []struct {
		name    string
		args    []string
		command string
		code    int
		want    map[string]string
	}{
		{"ls", []string{"ls", "--token", token, s.uri}, "ls", exitOK,
			map[string]string{"msg": "flight: call", "method": "ListFlights", "identity": id, "status": "OK"}},
		{"get by data URL", []string{"get", "--token", token, s.uri, "batch_tensors.images", filepath.Join(out, "a.arrows")}, "get", exitOK,
			map[string]string{"msg": "flight: data URL", "method": "GET", "flight": "batch_tensors.images", "identity": "url", "rows_sent": "4", "status": "OK"}},
		{"get by DoGet", []string{"get", "--grpc-only", "--token", token, s.uri, "batch_tensors.perm", filepath.Join(out, "b.arrows")}, "get", exitOK,
			map[string]string{"msg": "flight: call", "method": "DoGet", "flight": "batch_tensors.perm", "identity": id, "rows_sent": "4", "status": "OK"}},
		{"get --rows", []string{"get", "--rows", "2,0", "--token", token, s.uri, "batch_tensors", filepath.Join(out, "c.arrows")}, "get", exitOK,
			map[string]string{"msg": "flight: call", "method": "DoGet", "flight": "batch_tensors", "kind": "take", "identity": id, "rows_sent": "2", "status": "OK"}},
		{"not found", []string{"get", "--token", token, s.uri, "nope", filepath.Join(out, "d.npy")}, "get", exitFail,
			map[string]string{"msg": "flight: call", "method": "GetFlightInfo", "flight": "nope", "identity": id, "status": "NotFound"}},
		{"wrong token", []string{"ls", "--token", "wrong-one", s.uri}, "ls", exitFail,
			map[string]string{"msg": "flight: authentication failed", "level": "WARN", "method": "ListFlights", "status": "Unauthenticated", "error": "invalid bearer token"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(tc.args...)
			require.Equal(t, tc.code, code, stderr)
			assert.True(t, strings.HasPrefix(stderr, fmt.Sprintf(inClear, tc.command)), "the client says the token goes in clear: %s", stderr)
			assert.Equal(t, 1, strings.Count(stderr, "in clear"), stderr)
			r := awaitJSONRecord(t, s.stderr, tc.want)
			assert.Contains(t, r["client"], "127.0.0.1:")
			for _, key := range []string{"time", "bytes_sent", "bytes_received", "rows_sent", "rows_received", "duration"} {
				assert.Contains(t, r, key)
			}
		})
	}
	log := s.stderr.String()
	assert.NotContains(t, log, token, "the token is never logged")
	assert.NotContains(t, log, "wrong-one")
	assert.NotContains(t, s.stdout.String(), token)
	awaitJSONRecord(t, s.stderr, map[string]string{"msg": "flight: a bearer token arrived in clear …", "level": "WARN", "identity": id})
}

// TestServeLogFlags: --log-level and --log-format take the values they name and refuse others
// as usage errors; at warn, calls that succeed write nothing; at debug the banner lists the
// flights, a line each, and text records are key=value.
func TestServeLogFlags(t *testing.T) {
	for _, tc := range []struct{ flag, value, error string }{
		{"--log-level", "loud", `--log-level "loud": not debug, info, warn or error`},
		{"--log-format", "xml", `--log-format "xml": not text or json`},
	} {
		code, stdout, stderr := runCLI("serve", "--addr", "127.0.0.1:0", tc.flag, tc.value, t.TempDir())
		assert.Equal(t, exitUsage, code)
		assert.Empty(t, stdout)
		assert.True(t, strings.HasPrefix(stderr, "ndarrow serve: "+tc.error+"\nusage: ndarrow serve"), stderr)
	}

	dir := servedGolden(t)
	quiet := startServe(t, dir, "--log-level", "warn")
	code, _, stderr := runCLI("ls", quiet.uri)
	require.Equal(t, exitOK, code, stderr)
	code, _, stderr = runCLI("get", quiet.uri, "nope", filepath.Join(t.TempDir(), "x.npy"))
	require.Equal(t, exitFail, code, stderr)
	quiet.stop()
	assert.Empty(t, quiet.stderr.String(), "no call failed on the server's side, nothing at warn")

	loud := startServe(t, dir, "--log-level", "debug")
	for _, name := range []string{"batch_tensors (table: its columns together)", "batch_tensors.images", "batch_tensors.tokens"} {
		assert.Contains(t, loud.stdout.String(), "\n  "+name+"\n", "a line per flight at debug")
	}
	code, _, stderr = runCLI("ls", loud.uri)
	require.Equal(t, exitOK, code, stderr)
	require.Eventually(t, func() bool { return strings.Contains(loud.stderr.String(), `msg="flight: call" method=ListFlights`) }, 10*time.Second, 10*time.Millisecond)
	assert.Regexp(t, `level=INFO msg="flight: call" method=ListFlights client=127\.0\.0\.1:\d+ identity=none bytes_sent=\d+ bytes_received=0 rows_sent=0 rows_received=0 duration=\S+ status=OK`, loud.stderr.String())
}

// certFiles writes, in dir, a CA (ca.pem) and a server certificate it signs (NAME.pem,
// NAME.key) from the template edit makes of one valid for an hour, naming 127.0.0.1.
func certFiles(t *testing.T, dir, name string, edit func(*x509.Certificate)) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "server"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	edit(tmpl)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	for file, block := range map[string]*pem.Block{
		"ca.pem":      {Type: "CERTIFICATE", Bytes: caDER},
		name + ".pem": {Type: "CERTIFICATE", Bytes: der},
		name + ".key": {Type: "EC PRIVATE KEY", Bytes: keyDER},
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, file), pem.EncodeToMemory(block), 0o600))
	}
}

// TestServeWarnsOfItsCertificate: serve warns at start, in its log, of a certificate that is
// expired, not yet valid, or names no host in a subjectAltName.
func TestServeWarnsOfItsCertificate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*x509.Certificate)
		want string
	}{
		{"expired", func(c *x509.Certificate) {
			c.NotBefore, c.NotAfter = time.Now().Add(-2*time.Hour), time.Now().Add(-time.Hour)
		},
			`flight: the TLS certificate "CN=server" expired on …`},
		{"not yet valid", func(c *x509.Certificate) {
			c.NotBefore, c.NotAfter = time.Now().Add(time.Hour), time.Now().Add(2*time.Hour)
		},
			`flight: the TLS certificate "CN=server" is not valid until …`},
		{"no SAN", func(c *x509.Certificate) { c.IPAddresses = nil },
			`flight: the TLS certificate "CN=server" names no host in a subjectAltName, only its subject's CN: clients refuse it …`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			certFiles(t, dir, "server", tc.edit)
			s := startServe(t, servedGolden(t), "--log-format", "json",
				"--tls-cert", filepath.Join(dir, "server.pem"), "--tls-key", filepath.Join(dir, "server.key"))
			awaitJSONRecord(t, s.stderr, map[string]string{"level": "WARN", "msg": tc.want})
			assert.Len(t, jsonRecords(t, s.stderr.String()), 1, "that warning alone")
		})
	}
}

// TestClientSaysWhichSchemeToDial: ndarrow ls, as a process of its own, dialing grpc:// a TLS
// server or grpc+tls:// a plaintext one fails with one line saying which scheme to dial; the
// server logs what it was spoken.
func TestClientSaysWhichSchemeToDial(t *testing.T) {
	certs := t.TempDir()
	certFiles(t, certs, "server", func(*x509.Certificate) {})
	served := servedGolden(t)
	tlsServer := startServe(t, served, "--log-format", "json",
		"--tls-cert", filepath.Join(certs, "server.pem"), "--tls-key", filepath.Join(certs, "server.key"))
	plain := startServe(t, served, "--log-format", "json")
	tlsAddr := strings.TrimPrefix(tlsServer.uri, "grpc://")
	plainAddr := strings.TrimPrefix(plain.uri, "grpc://")

	for _, tc := range []struct {
		name   string
		args   []string
		line   string
		server *serving
		record map[string]string
	}{
		{"grpc:// to a TLS server", []string{"ls", "grpc://" + tlsAddr},
			"ndarrow ls: " + tlsAddr + " closed the connection before speaking gRPC: if it serves TLS, dial grpc+tls://" + tlsAddr + " (error reading server preface: EOF)\n",
			tlsServer, map[string]string{"msg": "flight: TLS handshake failed", "level": "WARN", "hint": "the client speaks gRPC without TLS: it should dial grpc+tls://"}},
		{"grpc+tls:// to a plaintext server", []string{"ls", "--tls-ca", filepath.Join(certs, "ca.pem"), "grpc+tls://" + plainAddr},
			"ndarrow ls: " + plainAddr + " does not speak TLS: dial grpc://" + plainAddr + ", not grpc+tls:// (tls: first record does not look like a TLS handshake)\n",
			plain, map[string]string{"msg": "flight: a client spoke TLS to this plaintext port", "level": "WARN"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := ndarrowProcess(t, tc.args...)
			assert.Equal(t, exitFail, code)
			assert.Empty(t, stdout)
			assert.Equal(t, tc.line, stderr)
			r := awaitJSONRecord(t, tc.server.stderr, tc.record)
			assert.Contains(t, r["client"], "127.0.0.1:")
		})
	}
	// Dialed as it serves, each answers; no token, no word of one.
	code, _, stderr := ndarrowProcess(t, "ls", "--tls-ca", filepath.Join(certs, "ca.pem"), "grpc+tls://"+tlsAddr)
	assert.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stderr)
}

// TestTokenOverTLSNotSaidInClear: a token sent over grpc+tls:// is not said to go in clear,
// by the client or the server.
func TestTokenOverTLSNotSaidInClear(t *testing.T) {
	certs := t.TempDir()
	certFiles(t, certs, "server", func(*x509.Certificate) {})
	s := startServe(t, servedGolden(t), "--log-format", "json", "--token", "t0k",
		"--tls-cert", filepath.Join(certs, "server.pem"), "--tls-key", filepath.Join(certs, "server.key"))
	code, _, stderr := runCLI("ls", "--token", "t0k", "--tls-ca", filepath.Join(certs, "ca.pem"), "grpc+tls://"+strings.TrimPrefix(s.uri, "grpc://"))
	require.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stderr)
	awaitJSONRecord(t, s.stderr, map[string]string{"msg": "flight: call", "method": "ListFlights", "status": "OK"})
	assert.NotContains(t, s.stderr.String(), "in clear")
}

// readmeBlock returns the lines of the code block after the README's marker "<!-- test:
// NAME -->", each command whole (its continuation lines joined).
func readmeBlock(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(b), "<!-- test: "+name+" -->")
	require.True(t, ok, "README has no block %q", name)
	_, body, ok := strings.Cut(after, "```sh\n")
	require.True(t, ok)
	body, _, ok = strings.Cut(body, "```")
	require.True(t, ok)
	var commands []string
	line := ""
	for _, l := range strings.Split(body, "\n") {
		l = strings.TrimSpace(l)
		if cont, ok := strings.CutSuffix(l, `\`); ok {
			line += cont
			continue
		}
		if line += l; line != "" {
			commands = append(commands, line)
		}
		line = ""
	}
	return commands
}

// readmeArgs returns the arguments of an ndarrow command line of the README, "ndarrow" left
// out, with DIR, "$TOKEN" and the port 8815 replaced.
func readmeArgs(line, dir, token, port string) []string {
	args := strings.Fields(strings.TrimPrefix(line, "ndarrow "))
	for i, a := range args {
		a = strings.ReplaceAll(a, `"$TOKEN"`, token)
		a = strings.ReplaceAll(a, ":8815", ":"+port)
		if a == "DIR" {
			a = dir
		}
		args[i] = a
	}
	return args
}

// TestREADMECertificateRecipes runs README's certificate recipes as written (openssl, in a
// directory of their own), then its serve and ls lines (on a free port): ls over TLS with the
// CA answers; with mutual TLS, ls with the client certificate answers and ls without it is
// told it needs one. serve warns of nothing at start: the certificate names the address.
func TestREADMECertificateRecipes(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("no openssl here: TestServeWarnsOfItsCertificate makes certificates in Go")
	}
	served := servedGolden(t)
	blocks := map[string][]string{}
	for _, name := range []string{"certificate recipe", "mutual TLS recipe"} {
		blocks[name] = readmeBlock(t, name)
	}
	t.Chdir(t.TempDir()) // the recipes name their files relative to where they run
	const token = "recipe-token"
	for _, tc := range []struct {
		block    string
		without  []string // a client without its certificate: the line it is told
		withouts string
	}{
		{block: "certificate recipe"},
		{block: "mutual TLS recipe", without: []string{"ls", "--tls-ca", "ca.pem", "grpc+tls://localhost:8815"},
			withouts: "refused the TLS handshake: if it requires a client certificate (mutual TLS), give one (ndarrow --tls-cert and --tls-key"},
	} {
		t.Run(tc.block, func(t *testing.T) {
			var serveLine, lsLine string
			for _, line := range blocks[tc.block] {
				switch {
				case strings.HasPrefix(line, "ndarrow serve "):
					serveLine = line
				case strings.HasPrefix(line, "ndarrow ls "):
					lsLine = line
				default:
					cmd := exec.Command("sh", "-ec", line)
					out, err := cmd.CombinedOutput()
					require.NoError(t, err, "%s\n%s", line, out)
				}
			}
			require.NotEmpty(t, serveLine)
			require.NotEmpty(t, lsLine)
			addr := freeAddr(t)
			_, port, err := net.SplitHostPort(addr)
			require.NoError(t, err)
			args := readmeArgs(serveLine, served, token, port)
			s := startServeAt(t, addr, args[len(args)-1], args[1:len(args)-1]...)
			code, stdout, stderr := runCLI(readmeArgs(lsLine, served, token, port)...)
			require.Equal(t, exitOK, code, stderr)
			assert.Contains(t, stdout, "batch_tensors.images")
			assert.Empty(t, stderr)
			// What Serve said of the certificate it said before it answered.
			assert.NotContains(t, s.stderr.String(), "level=WARN", "the certificate fits")
			assert.NotContains(t, s.stderr.String(), "TLS certificate")
			if tc.without != nil {
				code, _, stderr := runCLI(readmeArgs(strings.Join(tc.without, " "), served, token, port)...)
				require.Equal(t, exitFail, code)
				assert.Regexp(t, "^ndarrow ls: localhost:"+regexp.QuoteMeta(port)+" "+regexp.QuoteMeta(tc.withouts), stderr)
				assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
			}
		})
	}
}
