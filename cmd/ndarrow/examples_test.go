package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// missingModules is the exit status of a Python example that lacks a module it needs (NumPy,
// PyTorch, grpcio …): it prints which on its last line.
const missingModules = 77

// TestPythonExamples runs every Python script of examples/ (a file with a __main__ block:
// examples/trainers/check.py, examples/trainers/client_check.py, examples/torch/recipe.py) as
// `python3 SCRIPT NDARROW`, with this test binary as the ndarrow it starts (`serve`, `convert`,
// `batches`) and $NDARROW_EXAMPLES_TLS the directory of the certificates
// writeExampleCertificates makes, which they serve TLS and mutual TLS with: each checks its recipe
// against the real CLI and server and exits 0, or 1 at the first check that fails — the
// test's failure, with its output. The interpreter is NDARROW_PYTHON, else /usr/bin/python3
// (Debian's, where apt-get installs python3-numpy and the rest). A script missing a module
// exits 77 naming it, and so skips — unless NDARROW_PYTHON_EXAMPLES=required, as .ci/run
// sets it, having installed them: there it fails.
func TestPythonExamples(t *testing.T) {
	required := os.Getenv("NDARROW_PYTHON_EXAMPLES") == "required"
	unavailable := func(t *testing.T, why string) {
		t.Helper()
		if required {
			t.Fatalf("%s, and NDARROW_PYTHON_EXAMPLES=required", why)
		}
		t.Skip(why)
	}
	python := os.Getenv("NDARROW_PYTHON")
	if python == "" {
		python = "/usr/bin/python3"
	}
	if _, err := exec.LookPath(python); err != nil {
		unavailable(t, "no Python interpreter: "+err.Error())
	}
	scripts, err := filepath.Glob("../../examples/*/*.py")
	require.NoError(t, err)
	certificates := t.TempDir()
	writeExampleCertificates(t, certificates)
	ran := 0
	for _, script := range scripts {
		b, err := os.ReadFile(script)
		require.NoError(t, err)
		if !bytes.Contains(b, []byte(`if __name__ == "__main__":`)) {
			continue // a module the scripts import
		}
		ran++
		name := strings.TrimPrefix(script, "../../")
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(python, script, os.Args[0])
			cmd.Env = append(os.Environ(), "NDARROW_RUN_MAIN=1", // this binary is the CLI (TestMain)
				"NDARROW_EXAMPLES_TLS="+certificates)
			out, err := cmd.CombinedOutput()
			if exit := (*exec.ExitError)(nil); errors.As(err, &exit) && exit.ExitCode() == missingModules {
				unavailable(t, name+": "+lastLine(string(out)))
			}
			require.NoError(t, err, "%s %s:\n%s", python, name, out)
			passed := 0
			for _, line := range strings.Split(string(out), "\n") {
				if strings.HasPrefix(line, "ok ") {
					passed++
				}
			}
			t.Logf("%s: %d checks passed", name, passed)
		})
	}
	require.NotZero(t, ran, "Python examples in examples/")
}

// lastLine returns the last line of s that is not empty.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// writeExampleCertificates writes into dir what examples/trainers/tls_files.py names: a CA and
// the server certificate it signed for 127.0.0.1 and localhost (ca.pem, server.pem,
// server.key), and a second CA and the client certificate it signed, for mutual TLS
// (client-ca.pem, client.pem, client.key); P-256 keys, valid for a day.
func writeExampleCertificates(t *testing.T, dir string) {
	t.Helper()
	for _, pair := range []struct {
		ca, leaf     string
		leafTemplate x509.Certificate
	}{
		{"ca", "server", x509.Certificate{
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		}},
		{"client-ca", "client", x509.Certificate{ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}},
	} {
		caTemplate := x509.Certificate{IsCA: true, BasicConstraintsValid: true,
			KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
		ca, caKey := writeCertificate(t, dir, pair.ca, caTemplate, nil, nil)
		leaf := pair.leafTemplate
		leaf.KeyUsage = x509.KeyUsageDigitalSignature
		writeCertificate(t, dir, pair.leaf, leaf, ca, caKey)
	}
}

// writeCertificate writes dir/NAME.pem, a certificate of template (its subject, serial and
// validity set here) signed by parent's key (self-signed when parent is nil), and
// dir/NAME.key, its new key, and returns both.
func writeCertificate(t *testing.T, dir, name string, template x509.Certificate, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 64))
	require.NoError(t, err)
	template.SerialNumber, template.Subject = serial, pkix.Name{CommonName: "ndarrow examples " + name}
	template.NotBefore, template.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	if parent == nil {
		parent, parentKey = &template, key
	}
	der, err := x509.CreateCertificate(rand.Reader, &template, parent, &key.PublicKey, parentKey)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".key"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}), 0o600))
	return cert, key
}
