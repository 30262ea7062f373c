// SPDX-License-Identifier: Apache-2.0
// Produces N records with KafkaJS (keys, headers, explicit partitions and timestamps,
// gzip and uncompressed batches, acks -1/1), then reads the offsets back with the
// KafkaJS admin client (ListOffsets). Prints one JSON object on stdout.
// usage: node produce.js <broker> <topic> <n> <partitions> <t0>
'use strict';
const { Kafka, CompressionTypes, logLevel, Partitioners } = require('kafkajs');

async function main() {
  const [broker, topic, nArg, partsArg, t0Arg] = process.argv.slice(2);
  const n = Number(nArg);
  const parts = Number(partsArg);
  const t0 = Number(t0Arg);
  const kafka = new Kafka({
    clientId: 'tally-compat',
    brokers: [broker],
    logLevel: logLevel.WARN,
    retry: { retries: 3 },
  });
  const producer = kafka.producer({
    allowAutoTopicCreation: false,
    idempotent: false,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  const admin = kafka.admin();
  await producer.connect();
  await admin.connect();

  const batch = 500;
  const reports = [];
  for (let start = 0, k = 0; start < n; start += batch, k++) {
    const messages = [];
    for (let i = start; i < Math.min(n, start + batch); i++) {
      messages.push({
        key: i % 7 === 0 ? null : `key-${i}`,
        value: `kjs-${i}`,
        partition: i % parts,
        timestamp: String(t0 + i),
        headers: { seq: String(i), ...(i % 4 === 0 ? { extra: 'x' } : {}) },
      });
    }
    const res = await producer.send({
      topic,
      messages,
      acks: k % 3 === 2 ? 1 : -1,
      compression: k % 2 === 1 ? CompressionTypes.GZIP : CompressionTypes.None,
    });
    for (const r of res) {
      reports.push({ partition: r.partition, errorCode: r.errorCode, baseOffset: r.baseOffset,
                     count: messages.filter((m) => m.partition === r.partition).length });
    }
  }

  const offsets = await admin.fetchTopicOffsets(topic);
  // Not on a batch boundary: the answer must be a record's offset, not a batch's.
  const byTimestamp = await admin.fetchTopicOffsetsByTimestamp(topic, t0 + Math.floor(n / 2) + 37);
  await producer.disconnect();
  await admin.disconnect();
  process.stdout.write(JSON.stringify({ reports, offsets, byTimestamp }) + '\n');
}

main().catch((e) => {
  console.error('kafkajs failed:', e && e.stack ? e.stack : e);
  process.exit(1);
});
