// SPDX-License-Identifier: Apache-2.0
// bench/txn_counts.py's KafkaJS client: T rounds of N 1 KiB records over P partitions, each
// round one transaction (mode "txn") or one idempotent send (mode "idem"), after one
// unmeasured round. Prints one JSON line: the requests of the measured rounds by API (KafkaJS's
// REQUEST instrumentation events) and the seconds they took.
// usage: node txn_counts.js <broker> <topic> <mode> <n> <rounds> <partitions>
'use strict';
const { Kafka, logLevel } = require('kafkajs');

async function main() {
  const [broker, topic, mode, nArg, roundsArg, partsArg] = process.argv.slice(2);
  const n = Number(nArg), rounds = Number(roundsArg), parts = Number(partsArg);
  const kafka = new Kafka({ clientId: 'bench-counts', brokers: [broker], logLevel: logLevel.NOTHING });
  const txn = mode === 'txn';
  const producer = kafka.producer(txn
    ? { transactionalId: `bench-counts-${topic}`, idempotent: true, maxInFlightRequests: 1 }
    : { idempotent: true, maxInFlightRequests: 1 });
  const req = {};
  let counting = false;
  producer.on(producer.events.REQUEST, (e) => {
    if (counting)
      req[e.payload.apiName] = (req[e.payload.apiName] || 0) + 1;
  });
  await producer.connect();
  const value = Buffer.alloc(1024, 'x');
  const messages = [];
  for (let i = 0; i < n; i++)
    messages.push({ value, partition: i % parts });
  async function one() {
    if (txn) {
      const t = await producer.transaction();
      await t.send({ topic, acks: -1, messages });
      await t.commit();
    } else {
      await producer.send({ topic, acks: -1, messages });
    }
  }
  await one();
  counting = true;
  const t0 = process.hrtime.bigint();
  for (let r = 0; r < rounds; r++)
    await one();
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  counting = false;
  await producer.disconnect();
  console.log(JSON.stringify({ req, secs }));
}

main().catch((e) => { console.error(e); process.exit(1); });
