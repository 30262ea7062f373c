// SPDX-License-Identifier: Apache-2.0
// A KafkaJS consumer group member: subscribes to a topic from the beginning, reads
// until it has seen n records, commits the next offset of every partition it read,
// leaves, and reads the group's committed offsets and description back with the admin
// client. Prints one JSON object on stdout.
// usage: node group_consume.js <broker> <topic> <group> <n>
'use strict';
const { Kafka, logLevel } = require('kafkajs');

async function main() {
  const [broker, topic, groupId, nArg] = process.argv.slice(2);
  const n = Number(nArg);
  const kafka = new Kafka({
    clientId: 'tally-compat-group',
    brokers: [broker],
    logLevel: logLevel.WARN,
    retry: { retries: 5 },
  });
  const consumer = kafka.consumer({ groupId, sessionTimeout: 10000, heartbeatInterval: 500 });
  const admin = kafka.admin();
  await consumer.connect();
  await admin.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });

  const values = [];
  const next = {};
  let described = null;
  await new Promise((resolve, reject) => {
    consumer
      .run({
        autoCommit: false,
        eachMessage: async ({ partition, message }) => {
          values.push(message.value.toString());
          next[partition] = (BigInt(message.offset) + 1n).toString();
          if (values.length === n) resolve();
        },
      })
      .catch(reject);
    // unref: a pending timer must not keep node alive once the work is done.
    setTimeout(() => reject(new Error(`only ${values.length} of ${n} records`)), 60000).unref();
  });
  await consumer.commitOffsets(
    Object.entries(next).map(([partition, offset]) => ({ topic, partition: Number(partition), offset })),
  );
  described = await admin.describeGroups([groupId]);
  await consumer.disconnect();
  const offsets = await admin.fetchOffsets({ groupId, topics: [topic] });
  const after = await admin.describeGroups([groupId]);
  await admin.disconnect();
  process.stdout.write(JSON.stringify({ values, offsets, described, after }) + '\n');
}

main().catch((e) => {
  console.error('kafkajs failed:', e && e.stack ? e.stack : e);
  process.exit(1);
});
