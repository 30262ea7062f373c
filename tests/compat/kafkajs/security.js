// SPDX-License-Identifier: Apache-2.0
// KafkaJS over SSL (mutual TLS), SASL_PLAINTEXT and SASL_SSL, every case at once in one
// process. The cases come as JSON on stdin:
//   {"cases": [{"name", "broker": "HOST:PORT", "ssl": null | {"ca", "cert"?, "key"?},
//               "sasl": null | {"mechanism", "username", "password"},
//               "topic", "group", "txn", "expect": "ok" | "fail"}]}
// An "ok" case produces p-0..p-4, commits a transaction of c-0..c-2 that also commits offset
// 5 for the group <group>-txn (sendOffsets), aborts one of a-0..a-1 (with offset 99),
// produces "end", then reads the topic in a consumer group with read_committed until "end"
// and commits the next offset. A "fail" case tries to produce one record, with no retries,
// and reports the error it got. Prints one JSON object per case, one a line.
'use strict';
const fs = require('fs');
const { Kafka, logLevel } = require('kafkajs');

function client(c, retries) {
  const cfg = {
    clientId: 'tally-security-' + c.name,
    brokers: [c.broker],
    logLevel: logLevel.NOTHING,
    connectionTimeout: 5000,
    authenticationTimeout: 5000,
    retry: { retries, initialRetryTime: 100 },
  };
  if (c.ssl) {
    cfg.ssl = { ca: [fs.readFileSync(c.ssl.ca, 'utf8')] };
    if (c.ssl.cert) {
      cfg.ssl.cert = fs.readFileSync(c.ssl.cert, 'utf8');
      cfg.ssl.key = fs.readFileSync(c.ssl.key, 'utf8');
    }
  }
  if (c.sasl) cfg.sasl = c.sasl;
  return new Kafka(cfg);
}

async function okCase(c) {
  const kafka = client(c, 5);
  const producer = kafka.producer({ idempotent: false, allowAutoTopicCreation: false });
  await producer.connect();
  const records = (values) => values.map((value) => ({ value, partition: 0 }));
  const send = (values) => producer.send({ topic: c.topic, acks: -1, messages: records(values) });
  await send(['p-0', 'p-1', 'p-2', 'p-3', 'p-4']);

  const tp = kafka.producer({ transactionalId: c.txn, idempotent: true, maxInFlightRequests: 1 });
  await tp.connect();
  let txn = await tp.transaction();
  const offsets = (offset) => ({
    consumerGroupId: c.group + '-txn',
    topics: [{ topic: c.topic, partitions: [{ partition: 0, offset }] }],
  });
  await txn.send({ topic: c.topic, messages: records(['c-0', 'c-1', 'c-2']) });
  await txn.sendOffsets(offsets('5'));
  await txn.commit();
  txn = await tp.transaction();
  await txn.send({ topic: c.topic, messages: records(['a-0', 'a-1']) });
  await txn.sendOffsets(offsets('99'));
  await txn.abort();
  await tp.disconnect();
  await send(['end']);
  await producer.disconnect();

  const consumer = kafka.consumer({ groupId: c.group, readUncommitted: false, sessionTimeout: 10000,
                                    heartbeatInterval: 500 });
  await consumer.connect();
  await consumer.subscribe({ topics: [c.topic], fromBeginning: true });
  const values = [];
  let next = null;
  await new Promise((resolve, reject) => {
    consumer
      .run({
        autoCommit: false,
        eachMessage: async ({ message }) => {
          values.push(message.value.toString());
          if (message.value.toString() === 'end') {
            next = (BigInt(message.offset) + 1n).toString();
            resolve();
          }
        },
      })
      .catch(reject);
    setTimeout(() => reject(new Error(`no "end" after ${values.length} records`)), 60000).unref();
  });
  await consumer.commitOffsets([{ topic: c.topic, partition: 0, offset: next }]);
  await consumer.disconnect();
  return { values, committed: next };
}

function describe(e) {
  const chain = [];
  for (let x = e; x; x = x.originalError || x.cause) {
    chain.push(`${x.name}${x.type ? '[' + x.type + ']' : ''}: ${x.message}`);
    if (chain.length > 4) break;
  }
  return chain.join(' <- ');
}

async function failCase(c) {
  const producer = client(c, 0).producer({ idempotent: false, allowAutoTopicCreation: false });
  try {
    await producer.connect();
    const messages = [{ value: 'must-not-land', partition: 0 }];
    await producer.send({ topic: c.topic, acks: -1, messages });
  } finally {
    await producer.disconnect().catch(() => {});
  }
}

async function run(c) {
  try {
    if (c.expect === 'ok') return { name: c.name, ok: true, ...(await okCase(c)) };
    await failCase(c);
    return { name: c.name, ok: true };
  } catch (e) {
    return { name: c.name, ok: false, error: describe(e) };
  }
}

async function main() {
  const { cases } = JSON.parse(fs.readFileSync(0, 'utf8'));
  const results = await Promise.all(cases.map(run));
  // Exits at once: a case that failed half-way may leave a client connected, which would
  // keep node running.
  const out = results.map((r) => JSON.stringify(r) + '\n').join('');
  process.stdout.write(out, () => process.exit(0));
}

main().catch((e) => {
  console.error('kafkajs failed:', e && e.stack ? e.stack : e);
  process.exit(1);
});
