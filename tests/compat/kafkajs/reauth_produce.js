// SPDX-License-Identifier: Apache-2.0
// A KafkaJS producer on a SASL_PLAINTEXT listener (PLAIN) whose sessions expire
// (connections.max.reauth.ms): it sends one record every `gap` ms until n are acknowledged,
// re-authenticating on its open connections as KafkaJS does (KIP-368: once the session
// lifetime the broker answered, less reauthenticationThreshold, has passed). No retries, so
// a closed connection would reach the application as an error. Prints one JSON object:
// the records acknowledged, the errors, and what KafkaJS's own log says of its connections
// (connections opened, authentications done, closes by the server).
// usage: node reauth_produce.js <broker> <user> <password> <topic> <n> <gap_ms> <threshold_ms>
'use strict';
const { Kafka, logLevel } = require('kafkajs');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const [broker, username, password, topic, nArg, gapArg, thresholdArg] = process.argv.slice(2);
  const n = Number(nArg);
  const gap = Number(gapArg);
  const seen = { connects: 0, auths: 0, serverCloses: 0, errors: [] };
  const logCreator = () => ({ level, log }) => {
    const m = log.message || '';
    if (m === 'Connecting') seen.connects++;
    if (/^SASL PLAIN authentication successful/.test(m)) seen.auths++;
    if (m === 'Kafka server has closed connection') seen.serverCloses++;
    if (level === logLevel.ERROR) seen.errors.push(m);
  };
  const kafka = new Kafka({
    clientId: 'tally-reauth',
    brokers: [broker],
    sasl: { mechanism: 'plain', username, password },
    reauthenticationThreshold: Number(thresholdArg),
    retry: { retries: 0 },
    logLevel: logLevel.DEBUG,
    logCreator,
  });
  const producer = kafka.producer({ allowAutoTopicCreation: false, idempotent: false });
  await producer.connect();
  let acked = 0;
  const failures = [];
  const t0 = Date.now();
  for (let i = 0; i < n; i++) {
    try {
      await producer.send({ topic, acks: -1, messages: [{ partition: 0, value: `reauth-${i}` }] });
      acked++;
    } catch (e) {
      failures.push(String(e));
    }
    await sleep(gap);
  }
  const ms = Date.now() - t0;
  await producer.disconnect();
  process.stdout.write(JSON.stringify({ acked, failures, ms, ...seen }) + '\n');
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack ? e.stack : e) + '\n');
  process.exit(1);
});
