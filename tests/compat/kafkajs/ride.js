// SPDX-License-Identifier: Apache-2.0
// A KafkaJS idempotent producer (acks=all) and a consumer group member on one topic while
// the test kills and restarts a broker: the producer writes record k of partition p as
// "p<p>-<k, 9 digits>" to each partition in turn, one send of `per` records every 20 ms,
// until n are acknowledged; the consumer reads from the beginning until it has seen every
// acknowledged record. Every error that reaches the application is kept: a rejected send
// (its records are not acknowledged), a consumer crash. Prints "progress <acked> <seen>"
// lines while it runs and one JSON object at the end.
// usage: node ride.js <brokers,comma separated> <topic> <group> <n> <partitions>
'use strict';
const { Kafka, logLevel } = require('kafkajs');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const [brokers, topic, groupId, nArg, partsArg] = process.argv.slice(2);
  const n = Number(nArg);
  const parts = Number(partsArg);
  const per = 10;
  const kafka = new Kafka({
    clientId: 'tally-ride',
    brokers: brokers.split(','),
    logLevel: logLevel.NOTHING,
    // A leader kill is over once the controller fences the broker (its session timeout)
    // and the metadata moves: retries must cover that.
    retry: { retries: 10, initialRetryTime: 200, maxRetryTime: 5000 },
    requestTimeout: 10000,
  });
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  const consumer = kafka.consumer({ groupId, sessionTimeout: 10000, heartbeatInterval: 500 });
  const errors = [];
  const acked = {};
  const seen = {};
  for (let p = 0; p < parts; p++) {
    acked[p] = [];
    seen[p] = new Set();
  }
  let nAcked = 0;
  let nSeen = 0;
  consumer.on(consumer.events.CRASH, (e) => errors.push(`consumer crash: ${e.payload.error}`));

  await producer.connect();
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ partition, message }) => {
      const v = message.value.toString();
      if (!seen[partition].has(v)) {
        seen[partition].add(v);
        nSeen++;
      }
    },
  });
  const progress = setInterval(() => process.stdout.write(`progress ${nAcked} ${nSeen}\n`), 200);

  const next = {};
  for (let p = 0; p < parts; p++) next[p] = 0;
  for (let k = 0; nAcked < n; k++) {
    const p = k % parts;
    const messages = [];
    for (let i = 0; i < per; i++) messages.push({ partition: p, value: `p${p}-${String(next[p] + i).padStart(9, '0')}` });
    try {
      await producer.send({ topic, acks: -1, messages });
      for (const m of messages) acked[p].push(m.value);
      nAcked += per;
    } catch (e) {
      errors.push(`send to partition ${p}: ${e}`);
    }
    next[p] += per; // a failed send's sequence numbers are not reused
    await sleep(20);
  }
  const want = Object.values(acked).reduce((a, v) => a + v.length, 0);
  const deadline = Date.now() + 120000;
  while (Object.keys(acked).some((p) => acked[p].some((v) => !seen[p].has(v)))) {
    if (Date.now() > deadline) {
      errors.push(`the consumer saw ${nSeen} of ${want} acknowledged records`);
      break;
    }
    await sleep(100);
  }
  clearInterval(progress);
  await consumer.disconnect();
  await producer.disconnect();
  // Exit once written: a handle KafkaJS leaves behind must not keep node alive.
  process.stdout.write(JSON.stringify({ acked, errors, seen: nSeen }) + '\n', () => process.exit(0));
}

main().catch((e) => {
  console.error('kafkajs failed:', e && e.stack ? e.stack : e);
  process.exit(1);
});
