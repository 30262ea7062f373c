// SPDX-License-Identifier: Apache-2.0
// A KafkaJS 2.2.4 exactly-once copier for the copier check (tests/integration/txn_lib.py):
// consumes IN in GROUP (read_committed), and for each batch of a partition opens a
// transaction, sends the records to OUT's partition of the same number, adds the offsets
// with sendOffsets and commits. Any error ends the process (status 3); the check restarts it.
// usage: node copier.js <broker> <group> <in> <out> <transactionalId> <txnTimeoutMs>
'use strict';
const { Kafka, logLevel } = require('kafkajs');

async function main() {
  const [broker, group, inTopic, outTopic, tid, timeoutArg] = process.argv.slice(2);
  const kafka = new Kafka({ clientId: tid, brokers: [broker], logLevel: logLevel.WARN,
                            retry: { retries: 5 } });
  const producer = kafka.producer({ transactionalId: tid, idempotent: true,
                                    maxInFlightRequests: 1,
                                    transactionTimeout: Number(timeoutArg) });
  const consumer = kafka.consumer({ groupId: group, readUncommitted: false,
                                    sessionTimeout: 6000, heartbeatInterval: 500,
                                    rebalanceTimeout: 10000, maxBytesPerPartition: 65536 });
  await producer.connect();
  await consumer.connect();
  await consumer.subscribe({ topics: [inTopic], fromBeginning: true });
  await consumer.run({
    autoCommit: false,
    eachBatchAutoResolve: false,
    eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
      if (batch.messages.length === 0 || !isRunning() || isStale()) return;
      const msgs = batch.messages.slice(0, 100);
      const txn = await producer.transaction();
      try {
        await txn.send({ topic: outTopic, messages: msgs.map((m) => ({
          key: m.key, value: m.value, partition: batch.partition })) });
        const next = (BigInt(msgs[msgs.length - 1].offset) + 1n).toString();
        await txn.sendOffsets({ consumerGroupId: group, topics: [
          { topic: batch.topic, partitions: [{ partition: batch.partition, offset: next }] }] });
        await txn.commit();
      } catch (e) {
        console.error('transaction failed:', e);
        process.exit(3);
      }
      for (const m of msgs) resolveOffset(m.offset);
      await heartbeat();
    },
  });
  consumer.on(consumer.events.CRASH, (e) => {
    console.error('consumer crashed:', e.payload && e.payload.error);
    process.exit(3);
  });
}

main().catch((e) => {
  console.error(e);
  process.exit(3);
});
