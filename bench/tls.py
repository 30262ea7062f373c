#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""TLS cost against the crypto floor (issue 17): tallyd's CPU seconds per GiB over its SSL
listener ÷ bench/tls_server's doing the least a server can do over TLS with the same OpenSSL,
the same protocol version and cipher suite, under the same load from bench/loadgen --tls:

- tls_ingest_cpu_ratio (target <= 1.2): Produce (loadgen produce, as bench/ingest.py: 4
  connections, 4 in flight, 512 KiB batches of 1 KiB records, acks=1) into tallyd ÷ into
  `tls_server sink` (decrypt, write() each frame to a file, fixed answer).
- tls_read_cpu_ratio (target <= 1.2): Fetch v4 (loadgen fetch, as bench/read.py) of a warm
  log from tallyd ÷ the same segment files' byte ranges from `tls_server range` (pread,
  SSL_write).

Informational, in the same run: tallyd over TLS ÷ over PLAINTEXT (tls_ingest_plain_ratio,
tls_read_plain_ratio: what TLS costs us; reads lose sendfile() under TLS), and each floor ÷ its
plaintext floor (baseline_server, sendfile_server: what TLS costs any server on this CPU).
Then the deterministic counters (bench/counters.py): system calls per GiB by call, tallyd and
the floor, for TLS ingest and TLS read, each from a run of its own under strace.

One release tallyd with a PLAINTEXT and an SSL listener (a PEM keystore made here with the
openssl CLI, an EC P-256 key); servers pinned to SERVER_CPUS, loadgen on the others.
BENCH_TLS_BYTES (default 1g) per ingest run, BENCH_TLS_READ_BYTES (default 1g) of log read
twice per read run, BENCH_ROUNDS (default 3) rounds; each figure is the ratio of each side's
best round (noise only ever adds CPU time). BENCH_COUNT_BYTES (default 512m) per counted run;
BENCH_COUNTERS=0 skips them."""
import os
import shutil
import socket
import ssl
import struct
import subprocess
import time

import counters
import lib

BYTES = os.environ.get("BENCH_TLS_BYTES", "1g")
READ_BYTES = os.environ.get("BENCH_TLS_READ_BYTES", "1g")
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
COUNT_BYTES = os.environ.get("BENCH_COUNT_BYTES", "512m")
COUNTERS = os.environ.get("BENCH_COUNTERS", "1") != "0"
PARTITIONS = 4
CHUNK = "8m"
LOAD = ["--connections", 4, "--inflight", 4, "--batch-bytes", "512k", "--record-size", 1024,
        "--partitions", PARTITIONS]
FETCH = ["--partitions", PARTITIONS, "--connections", PARTITIONS, "--max-bytes", "50m",
         "--partition-max-bytes", CHUNK, "--passes", 2]


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


def negotiated(port, ca):
    """"TLSv1.3 TLS_AES_256_GCM_SHA384" as `openssl s_client` sees the server at port."""
    p = subprocess.run(["openssl", "s_client", "-connect", "127.0.0.1:%d" % port, "-CAfile", ca],
                       input="", capture_output=True, text=True, timeout=10)
    proto = cipher = "?"
    for line in p.stdout.splitlines():
        w = line.split()
        if line.startswith("New, ") and "Cipher is" in line:
            proto, cipher = w[1].rstrip(","), w[-1]
    return "%s %s" % (proto, cipher)


def check_ranges(port, ca, files):
    """The floor must send the right bytes, not only as many (loadgen checks the sizes): a few
    ranges of the concatenation of files, one across a file boundary, compared byte for byte
    over Python's ssl client."""
    sizes = [os.path.getsize(f) for f in files]
    total = sum(sizes)

    def want(off, n):
        out, at = b"", 0
        for f, size in zip(files, sizes):
            if off < at + size and n > len(out):
                with open(f, "rb") as fh:
                    fh.seek(max(off - at, 0))
                    out += fh.read(min(size - max(off - at, 0), n - len(out)))
            at += size
        return out
    mid = max(sizes[0] - 1000, 0)
    ranges = [(0, min(70000, total)), (mid, min(300000, total - mid)), (max(total - 5, 0), min(5, total))]
    ctx = ssl.create_default_context(cafile=ca)
    with ctx.wrap_socket(socket.create_connection(("127.0.0.1", port)),
                         server_hostname="127.0.0.1") as s:
        for i, (off, n) in enumerate(ranges):
            s.sendall(struct.pack(">iiqi", 16, i, off, n))
            got = b""
            while len(got) < 8 + n:
                chunk = s.recv(8 + n - len(got))
                if not chunk:
                    raise RuntimeError("tls_server range closed the connection")
                got += chunk
            if got[:8] != struct.pack(">ii", 4 + n, i) or got[8:] != want(off, n):
                raise RuntimeError("tls_server range sent wrong bytes for [%d, +%d)" % (off, n))


def per_gib(pid, *args):
    """Runs loadgen with args; returns (CPU s per GiB moved of the process pid, loadgen's kv)."""
    c0 = lib.cpu_seconds(pid)
    r = lib.loadgen(*args)
    return (lib.cpu_seconds(pid) - c0) / (r["bytes"] / lib.GIB), r


def counted(pid, *args):
    """One run of loadgen with args under strace -c -f -p pid: (calls per GiB, summary)."""
    lib.settle()
    st = counters.Strace(pid)
    r = lib.loadgen(*args)
    calls, gib = st.stop(), r["bytes"] / lib.GIB
    total, summary = counters.syscall_summary(calls, gib)
    other = sorted(((v, k) for k, v in calls.items() if k not in counters.MAIN_CALLS), reverse=True)
    if other:
        summary += " (%s)" % ", ".join("%s %.0f" % (k, v / gib) for v, k in other[:3])
    return total, summary


class Sink:
    """A fresh sink (tls_server sink, or baseline_server without certs) in its own dir."""

    def __init__(self, certs=None):
        self.dir = lib.scratch_dir("tls-sink")
        self.port = lib.free_port()
        if certs:
            argv = [os.path.join(lib.BENCH_BIN, "tls_server"), "sink", str(self.port), self.dir,
                    os.path.join(certs, "srv.pem"), os.path.join(certs, "srv.key")]
        else:
            argv = [os.path.join(lib.BENCH_BIN, "baseline_server"), str(self.port), self.dir]
        self.srv = lib.Proc(argv, pin=True)
        self.pid = self.srv.pid

    def stop(self):
        self.srv.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def ingest_round(t, ssl_port, certs, ca, load):
    """{side: CPU s per GiB} for one round of the same produce load on each side."""
    out = {}
    for side in ("floor", "tallyd", "plain_floor", "plain"):
        lib.settle()
        tls = side in ("floor", "tallyd")
        extra = ["--tls", ca] if tls else []
        if side in ("floor", "plain_floor"):
            s = Sink(certs if tls else None)
            try:
                out[side], r = per_gib(s.pid, "produce", "--port", s.port, "--topic", "t",
                                       *(load + extra))
            finally:
                s.stop()
        else:
            t.fresh = getattr(t, "fresh", 0) + 1
            topic = "tls-in-%d" % t.fresh
            t.create_topic(topic, PARTITIONS)
            try:
                out[side], r = per_gib(t.pid, "produce", "--port", ssl_port if tls else t.port,
                                       "--topic", topic, *(load + extra))
            finally:
                lib.run(t.tally("topics", "delete", topic), check=False)
                time.sleep(1)
        lib.log("ingest %-11s %.3f CPU s/GiB (%.0f MiB/s)" % (side, out[side], r["MiB/s"]))
    return out


def main():
    certs = lib.scratch_dir("tls-certs")
    make_certs(certs)
    ca = os.path.join(certs, "ca.pem")
    ssl_port = lib.free_port()
    t = lib.Tallyd("tls", pin=True, settings={"ssl.keystore.location": os.path.join(certs, "ks.pem")},
                   extra_listeners="SSL://127.0.0.1:%d" % ssl_port)
    load = LOAD + ["--bytes", BYTES]
    res = {}
    procs = []
    try:
        floor = lib.Proc([os.path.join(lib.BENCH_BIN, "tls_server"), "sink", str(lib.free_port()),
                          certs, os.path.join(certs, "srv.pem"), os.path.join(certs, "srv.key")])
        suites = "tallyd %s, tls_server %s, loadgen's OpenSSL client" % (
            negotiated(ssl_port, ca), negotiated(int(floor.p.args[2]), ca))
        floor.stop()
        lib.log(suites)

        # Ingest: one unmeasured warm-up, then the rounds.
        ingest_round(t, ssl_port, certs, ca, LOAD + ["--bytes", "256m"])
        rounds = [ingest_round(t, ssl_port, certs, ca, load) for _ in range(ROUNDS)]
        best = {k: min(r[k] for r in rounds) for k in rounds[0]}
        res["ingest"] = best

        # Read: a warm log, tallyd over TLS and PLAINTEXT, the floors on its segment files.
        t.create_topic("read", PARTITIONS)
        lib.loadgen("produce", "--port", t.port, "--topic", "read", "--partitions", PARTITIONS,
                    "--connections", PARTITIONS, "--bytes", READ_BYTES, "--batch-bytes", "512k")
        files = []
        for p in range(PARTITIONS):
            files += t.partition_logs("read", p)
        for f in files:
            with open(f, "rb") as fh:
                while fh.read(1 << 24):
                    pass
        rport, sport = lib.free_port(), lib.free_port()
        rng = lib.Proc([os.path.join(lib.BENCH_BIN, "tls_server"), "range", str(rport),
                        os.path.join(certs, "srv.pem"), os.path.join(certs, "srv.key")] + files,
                       pin=True)
        procs.append(rng)
        sf = lib.Proc([os.path.join(lib.BENCH_BIN, "sendfile_server"), str(sport)] + files,
                      pin=True)
        procs.append(sf)
        size = int(rng.ready_line.split()[1])
        check_ranges(rport, ca, files)
        ranges = ["--size", size, "--connections", PARTITIONS, "--chunk", CHUNK, "--passes", 2]
        sides = {
            "tallyd": (t.pid, ["fetch", "--port", ssl_port, "--topic", "read", "--tls", ca] + FETCH),
            "floor": (rng.pid, ["ranges", "--port", rport, "--tls", ca] + ranges),
            "plain": (t.pid, ["fetch", "--port", t.port, "--topic", "read"] + FETCH),
            "plain_floor": (sf.pid, ["ranges", "--port", sport] + ranges),
        }
        reads = {k: [] for k in sides}
        for i in range(ROUNDS):
            for side, (pid, args) in sides.items():
                lib.settle()
                v, r = per_gib(pid, *args)
                reads[side].append(v)
                lib.log("read   %-11s %.3f CPU s/GiB (%.0f MiB/s, %.2f GiB)" %
                        (side, v, r["MiB/s"], r["bytes"] / lib.GIB))
        res["read"] = {k: min(v) for k, v in reads.items()}

        if COUNTERS and counters.have("strace"):
            cl = LOAD + ["--bytes", COUNT_BYTES]
            s = Sink(certs)
            try:
                res["c_in_floor"] = counted(s.pid, "produce", "--port", s.port, "--topic", "t",
                                            *(cl + ["--tls", ca]))
            finally:
                s.stop()
            t.create_topic("tls-count", PARTITIONS)
            res["c_in_tallyd"] = counted(t.pid, "produce", "--port", ssl_port, "--topic",
                                         "tls-count", *(cl + ["--tls", ca]))
            res["c_rd_tallyd"] = counted(t.pid, *sides["tallyd"][1])
            res["c_rd_floor"] = counted(rng.pid, *sides["floor"][1])
            for k in ("c_in_tallyd", "c_in_floor", "c_rd_tallyd", "c_rd_floor"):
                lib.log("%s: %.0f syscalls/GiB (%s)" % (k, res[k][0], res[k][1]))
    finally:
        for p in procs:
            p.stop()
        t.stop()
        shutil.rmtree(certs, ignore_errors=True)

    i, r = res["ingest"], res["read"]
    note = "best of %d: %s" % (ROUNDS, suites)
    lib.result("tls_ingest_cpu_ratio", i["tallyd"] / i["floor"], "x", "<=", 1.2,
               "tallyd %.3f / tls_server sink %.3f CPU s per GiB (%s per run); %s" %
               (i["tallyd"], i["floor"], BYTES, note))
    lib.result("tls_read_cpu_ratio", r["tallyd"] / r["floor"], "x", "<=", 1.2,
               "tallyd %.3f / tls_server range %.3f CPU s per GiB (%s log read twice)" %
               (r["tallyd"], r["floor"], READ_BYTES))
    lib.result("tls_ingest_plain_ratio", i["tallyd"] / i["plain"], "x", None, None,
               "tallyd TLS %.3f / PLAINTEXT %.3f; floors: tls_server %.3f / baseline_server %.3f"
               " = %.2fx" % (i["tallyd"], i["plain"], i["floor"], i["plain_floor"],
                             i["floor"] / i["plain_floor"]))
    lib.result("tls_read_plain_ratio", r["tallyd"] / r["plain"], "x", None, None,
               "tallyd TLS %.3f / PLAINTEXT (sendfile) %.3f; floors: tls_server %.3f / "
               "sendfile_server %.3f = %.2fx" % (r["tallyd"], r["plain"], r["floor"],
                                                 r["plain_floor"], r["floor"] / r["plain_floor"]))
    if "c_in_tallyd" in res:
        for k, name in (("in", "ingest"), ("rd", "read")):
            a, b = res["c_%s_tallyd" % k], res["c_%s_floor" % k]
            lib.result("tls_%s_syscall_ratio" % name, a[0] / b[0], "x", None, None,
                       "per GiB (%s): tallyd %.0f (%s); tls_server %.0f (%s)" %
                       (COUNT_BYTES, a[0], a[1], b[0], b[1]))


if __name__ == "__main__":
    main()
