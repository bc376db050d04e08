"""The certificates check.py and client_check.py serve and connect with: a CA and the server's
certificate for 127.0.0.1 (ca.pem, server.pem, server.key), and a second CA and a client's
certificate it signed, for mutual TLS (client-ca.pem, client.pem, client.key).

cmd/ndarrow TestPythonExamples makes them (Go's crypto/x509) and names their directory in
$NDARROW_EXAMPLES_TLS; run by hand, the scripts make them with the openssl command.
"""

import os
import shutil
import subprocess

NAMES = ("ca.pem", "server.pem", "server.key", "client-ca.pem", "client.pem", "client.key")


def _openssl(d):
    """Makes NAMES in d with openssl (SANs IP:127.0.0.1 and DNS:localhost, a day's validity)."""
    def run(*args):
        subprocess.run(["openssl", *args], cwd=d, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    for ca, leaf, ext in (("ca", "server", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n"),
                          ("client-ca", "client", "extendedKeyUsage=clientAuth\n")):
        run("req", "-x509", *key, "-keyout", f"{ca}.key", "-out", f"{ca}.pem", "-days", "1", "-subj", f"/CN=ndarrow check {ca}")
        run("req", *key, "-keyout", f"{leaf}.key", "-out", f"{leaf}.csr", "-subj", f"/CN=ndarrow check {leaf}")
        with open(os.path.join(d, f"{leaf}.ext"), "w") as f:
            f.write(ext)
        run("x509", "-req", "-in", f"{leaf}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key", "-CAcreateserial",
            "-out", f"{leaf}.pem", "-days", "1", "-extfile", f"{leaf}.ext")


def files(tmp):
    """{name: path} of NAMES: those of $NDARROW_EXAMPLES_TLS, else made in tmp with openssl.
    Raises LookupError naming what is missing when neither is there."""
    d = os.environ.get("NDARROW_EXAMPLES_TLS")
    if not d:
        if shutil.which("openssl") is None:
            raise LookupError("no $NDARROW_EXAMPLES_TLS (cmd/ndarrow TestPythonExamples sets it) and no openssl command to make certificates")
        d = os.path.join(tmp, "tls")
        os.makedirs(d)
        _openssl(d)
    out = {name: os.path.join(d, name) for name in NAMES}
    missing = [p for p in out.values() if not os.path.isfile(p)]
    if missing:
        raise LookupError(f"no {', '.join(missing)}")
    return out
