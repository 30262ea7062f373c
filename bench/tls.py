#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""TLS cost: tallyd's CPU seconds per GiB of Produce over an SSL listener ÷ the same over
PLAINTEXT, and the same ratio for reading it back (Fetch over TLS reads the file ranges
and encrypts them; PLAINTEXT sends them with sendfile()). Informational (issue 17 asks
for TLS ingest ÷ plaintext; its ≤ 1.2 target is against a bare OpenSSL server, not built
yet).

One release tallyd with a PLAINTEXT and an SSL listener (a PEM keystore made here with
the openssl CLI; TLS 1.3, OpenSSL's default suite), pinned to SERVER_CPUS; the client is
`tally perf` (librdkafka) on the other CPUs, with the same settings on both listeners.
Each round produces BENCH_TLS_RECORDS (default 500000) 1 KiB records into a fresh topic
over each listener, then consumes them all over each; BENCH_ROUNDS (default 3) rounds,
the figure being the ratio of each side's best round (noise only ever adds CPU time)."""
import os
import subprocess
import time

import lib

RECORDS = int(os.environ.get("BENCH_TLS_RECORDS", "500000"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
SIZE = 1024


def make_certs(d):
    def o(*args):
        subprocess.run(["openssl"] + list(args), cwd=d, check=True, capture_output=True)
    o("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
      "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=bench CA")
    with open(os.path.join(d, "san.ext"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\n")
    o("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
      "srv.key", "-out", "srv.csr", "-subj", "/CN=127.0.0.1")
    o("x509", "-req", "-in", "srv.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
      "-CAcreateserial", "-out", "srv.pem", "-days", "2", "-extfile", "san.ext")
    with open(os.path.join(d, "ks.pem"), "w") as f:
        f.write(open(os.path.join(d, "srv.key")).read() + open(os.path.join(d, "srv.pem")).read())


def perf(t, bootstrap, extra, *args):
    argv = [lib.TALLY, "-b", bootstrap, "perf"] + [str(a) for a in args]
    for x in extra:
        argv += ["-X", x]
    c0 = lib.cpu_seconds(t.pid)
    rc, out, err = lib.run(argv, check=False, cpus=lib.CLIENT_CPUS)
    cpu = lib.cpu_seconds(t.pid) - c0
    if rc != 0:
        raise RuntimeError("tally perf %s failed: %s" % (args[0], err.strip()[-300:]))
    return cpu / (RECORDS * SIZE / lib.GIB)


def main():
    certs = lib.scratch_dir("tls-certs")
    make_certs(certs)
    ssl_port = lib.free_port()
    t = lib.Tallyd("tls", pin=True, settings={"ssl.keystore.location": os.path.join(certs, "ks.pem")},
                   extra_listeners="SSL://127.0.0.1:%d" % ssl_port)
    sides = {"plaintext": (t.bootstrap, []),
             "tls": ("127.0.0.1:%d" % ssl_port,
                     ["security.protocol=SSL", "ssl.ca.location=" + os.path.join(certs, "ca.pem")])}
    best = {(s, k): [] for s in sides for k in ("produce", "consume")}
    try:
        for i in range(ROUNDS):
            for side, (bootstrap, extra) in sides.items():
                topic = "tls-%s-%d" % (side, i)
                t.create_topic(topic, 4)
                lib.settle()
                best[(side, "produce")].append(
                    perf(t, bootstrap, extra, "produce", "--topic", topic, "--records", RECORDS,
                         "--record-size", SIZE))
                lib.settle()
                best[(side, "consume")].append(
                    perf(t, bootstrap, extra, "consume", "--topic", topic, "--records", RECORDS,
                         "--from-beginning"))
                lib.log("round %d %-9s: produce %.3f, consume %.3f CPU s/GiB" %
                        (i + 1, side, best[(side, "produce")][-1], best[(side, "consume")][-1]))
                lib.run(t.tally("topics", "delete", topic), check=False)
                time.sleep(1)
    finally:
        t.stop()
    for k in ("produce", "consume"):
        tls, plain = min(best[("tls", k)]), min(best[("plaintext", k)])
        lib.result("tls_%s_cpu_ratio" % ("ingest" if k == "produce" else "read"), tls / plain,
                   "x", "<=", 1.2 if k == "produce" else 5.0,
                   "best of %d: TLS %.3f / plaintext %.3f tallyd CPU s per GiB (informational)" %
                   (ROUNDS, tls, plain))


if __name__ == "__main__":
    main()
