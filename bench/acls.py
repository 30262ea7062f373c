#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Produce and Fetch throughput with 10,000 ACLs ÷ without an authorizer (issue 17: >= 0.97
each). Two tallyds with the same SASL_PLAINTEXT listener (PLAIN user alice): one without an
authorizer, one with StandardAuthorizer and BENCH_ACLS (default 10,000) ACLs — half literal,
half prefixed, on other topics and principals, plus alice's own WRITE and READ on the prefix
of the benchmark's topics — so every Produce and Fetch is checked against the full index.
`tally perf produce` / `perf consume` as alice over SASL, BENCH_CLIENT_RECORDS (default
1,000,000) 1 KiB records per run, BENCH_ROUNDS (default 3) rounds alternating which broker
goes first; each figure is the ratio of each side's best run. Both brokers are pinned to
SERVER_CPUS and the client to the others (BENCH_PIN=0: not), and each run also gives the
broker's CPU seconds per GiB moved: acl_produce_cpu_ratio and acl_fetch_cpu_ratio (with ACLs ÷
without, informational; lower is better, 1/0.97 = 1.03 is the same bar), steadier than records/s
when the client shares the machine."""
import os
import re
import time

import lib

RECORDS = int(os.environ.get("BENCH_CLIENT_RECORDS", "1000000"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
N_ACLS = int(os.environ.get("BENCH_ACLS", "10000"))
JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
        'user_alice="alice-secret";')
SASL = ["-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanism=PLAIN",
        "-X", "sasl.username=alice", "-X", "sasl.password=alice-secret"]


def start(tag, authorizer):
    sasl_port = lib.free_port()
    settings = {
        "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
    }
    if authorizer:
        settings.update({
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "super.users": "User:ANONYMOUS",
        })
    t = lib.Tallyd(tag, settings=settings, pin=True,
                   extra_listeners="SASL_PLAINTEXT://127.0.0.1:%d" % sasl_port)
    t.sasl = "127.0.0.1:%d" % sasl_port
    return t


def add_acls(t):
    """N_ACLS entries through kafka-python's admin client on the PLAINTEXT listener (a
    super user), in batches."""
    from kafka.admin import (ACL, ACLOperation, ACLPermissionType, ACLResourcePatternType,
                             KafkaAdminClient, ResourcePattern, ResourceType)
    a = KafkaAdminClient(bootstrap_servers=t.bootstrap, request_timeout_ms=60000)
    try:
        mine = [ACL("User:alice", "*", op, ACLPermissionType.ALLOW,
                    ResourcePattern(ResourceType.TOPIC, "fresh-", ACLResourcePatternType.PREFIXED))
                for op in (ACLOperation.WRITE, ACLOperation.READ)]
        mine.append(ACL("User:alice", "*", ACLOperation.READ, ACLPermissionType.ALLOW,
                        ResourcePattern(ResourceType.GROUP, "*", ACLResourcePatternType.LITERAL)))
        a.create_acls(mine)
        batch = []
        for i in range(N_ACLS):
            prefixed = i % 2 == 1
            name = ("team-%04d-" % i) if prefixed else ("topic-%05d" % i)
            batch.append(ACL("User:app-%d" % (i % 97), "*",
                             ACLOperation.READ if i % 3 else ACLOperation.WRITE,
                             ACLPermissionType.ALLOW,
                             ResourcePattern(ResourceType.TOPIC, name,
                                             ACLResourcePatternType.PREFIXED if prefixed
                                             else ACLResourcePatternType.LITERAL)))
            if len(batch) == 1000:
                res = a.create_acls(batch)
                assert not res["failed"], res["failed"][:1]
                batch = []
        if batch:
            a.create_acls(batch)
    finally:
        a.close()


def rate(out):
    m = re.search(r"([0-9.]+) records/sec", out)
    return float(m.group(1)) if m else None


def one_round(t):
    """(produce records/s, consume records/s, produce CPU s/GiB, consume CPU s/GiB) into and
    out of a fresh topic."""
    gib = RECORDS * 1024 / lib.GIB
    t.fresh = getattr(t, "fresh", 0) + 1
    topic = "fresh-%d" % t.fresh
    t.create_topic(topic, 4)
    try:
        c0 = lib.cpu_seconds(t.pid)
        rc, out, err = lib.run([lib.TALLY, "-b", t.sasl, "perf", "produce", "--topic", topic,
                                "--records", str(RECORDS), "--record-size", "1024"] + SASL,
                               check=False, cpus=lib.CLIENT_CPUS)
        pcpu = (lib.cpu_seconds(t.pid) - c0) / gib
        if rc != 0:
            raise RuntimeError("perf produce: %s" % err.strip()[-300:])
        p = rate(out)
        c0 = lib.cpu_seconds(t.pid)
        rc, out, err = lib.run([lib.TALLY, "-b", t.sasl, "perf", "consume", "--topic", topic,
                                "--records", str(RECORDS), "--from-beginning"] + SASL,
                               check=False, cpus=lib.CLIENT_CPUS)
        ccpu = (lib.cpu_seconds(t.pid) - c0) / gib
        if rc != 0:
            raise RuntimeError("perf consume: %s" % err.strip()[-300:])
        c = rate(out.strip().splitlines()[-1])
        return p, c, pcpu, ccpu
    finally:
        lib.run(t.tally("topics", "delete", topic), check=False)
        time.sleep(1)


def main():
    plain = start("acls-off", False)
    guarded = start("acls-on", True)
    try:
        add_acls(guarded)
        lib.log("%d ACLs in place" % N_ACLS)
        best = {"off": [0.0, 0.0], "on": [0.0, 0.0]}
        cpu = {"off": [1e9, 1e9], "on": [1e9, 1e9]}
        for i in range(ROUNDS):
            for kind in (("off", "on") if i % 2 == 0 else ("on", "off")):
                p, c, pc, cc = one_round(plain if kind == "off" else guarded)
                lib.log("%s: produce %.0f records/s (%.3f CPU s/GiB), consume %.0f records/s "
                        "(%.3f CPU s/GiB)" % (kind, p, pc, c, cc))
                best[kind] = [max(best[kind][0], p), max(best[kind][1], c or 0)]
                cpu[kind] = [min(cpu[kind][0], pc), min(cpu[kind][1], cc)]
        lib.result("acl_produce_ratio", best["on"][0] / best["off"][0], "x", ">=", 0.97,
                   "%d ACLs" % N_ACLS)
        lib.result("acl_fetch_ratio", best["on"][1] / best["off"][1], "x", ">=", 0.97,
                   "%d ACLs" % N_ACLS)
        for k, name in ((0, "produce"), (1, "fetch")):
            lib.result("acl_%s_cpu_ratio" % name, cpu["on"][k] / max(cpu["off"][k], 1e-9), "x",
                       None, None, "tallyd CPU s per GiB, best of %d: %d ACLs %.3f / none %.3f" %
                       (ROUNDS, N_ACLS, cpu["on"][k], cpu["off"][k]))
    finally:
        with open(guarded.errf.name, "rb") as f:
            denied = f.read().count(b" is Denied ")
        if denied:
            lib.log("the authorizer denied %d requests (see its log)" % denied)
        plain.stop()
        guarded.stop()


if __name__ == "__main__":
    main()
