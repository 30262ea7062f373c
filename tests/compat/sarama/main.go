// SPDX-License-Identifier: Apache-2.0
// An old Go client against tallyd: Debian's Sarama 1.22 at a chosen Config.Version
// creates a topic (ClusterAdmin, CreateTopics v0 at 0.10.x), produces keyed messages
// (Produce v2 with magic 1 message sets at 0.10.x, v0 with magic 0 in Sarama's default
// 0.8.2 setting), optionally gzip-compressed, then consumes them from the oldest offset
// (ListOffsets v0/v1, Fetch v0..v3) and checks every key and value in order.
//
//	sarama-check <bootstrap> <topic> <version|default> <none|gzip|snappy|lz4> <count>
//
// Prints "OK <count>" and exits 0, or says what went wrong and exits 1.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/Shopify/sarama"
)

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "sarama-check: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	if len(os.Args) != 6 {
		fail("usage: sarama-check <bootstrap> <topic> <version|default> <codec> <count>")
	}
	addrs := []string{os.Args[1]}
	topic := os.Args[2]
	n, err := strconv.Atoi(os.Args[5])
	if err != nil {
		fail("count: %v", err)
	}

	cfg := sarama.NewConfig()
	if os.Args[3] != "default" {
		v, err := sarama.ParseKafkaVersion(os.Args[3])
		if err != nil {
			fail("version: %v", err)
		}
		cfg.Version = v
	}
	switch os.Args[4] {
	case "none":
	case "gzip":
		cfg.Producer.Compression = sarama.CompressionGZIP
	case "snappy":
		cfg.Producer.Compression = sarama.CompressionSnappy
	case "lz4":
		cfg.Producer.Compression = sarama.CompressionLZ4
	default:
		fail("codec %q", os.Args[4])
	}
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Flush.Messages = 10 // several messages per request: wrappers hold many
	cfg.Producer.Flush.Frequency = 5 * time.Millisecond
	cfg.Metadata.Retry.Max = 20
	cfg.Metadata.Retry.Backoff = 100 * time.Millisecond

	// ClusterAdmin needs 0.10.1+ (CreateTopics); the 0.8.2 default relies on auto-creation.
	if cfg.Version.IsAtLeast(sarama.V0_10_1_0) {
		admin, err := sarama.NewClusterAdmin(addrs, cfg)
		if err != nil {
			fail("cluster admin: %v", err)
		}
		err = admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 1}, false)
		if err != nil {
			fail("create topic: %v", err)
		}
		admin.Close()
	}

	producer, err := sarama.NewAsyncProducer(addrs, cfg)
	if err != nil {
		fail("producer: %v", err)
	}
	for i := 0; i < n; i++ {
		producer.Input() <- &sarama.ProducerMessage{
			Topic:     topic,
			Partition: 0,
			Key:       sarama.StringEncoder(fmt.Sprintf("key-%d", i)),
			Value:     sarama.StringEncoder(fmt.Sprintf("sarama-value-%d", i)),
		}
	}
	for i := 0; i < n; i++ {
		select {
		case <-producer.Successes():
		case perr := <-producer.Errors():
			fail("produce: %v", perr.Err)
		case <-time.After(60 * time.Second):
			fail("produce: no answer after %d of %d", i, n)
		}
	}
	producer.Close()

	consumer, err := sarama.NewConsumer(addrs, cfg)
	if err != nil {
		fail("consumer: %v", err)
	}
	pc, err := consumer.ConsumePartition(topic, 0, sarama.OffsetOldest)
	if err != nil {
		fail("consume partition: %v", err)
	}
	for i := 0; i < n; i++ {
		select {
		case m := <-pc.Messages():
			wantKey, wantValue := fmt.Sprintf("key-%d", i), fmt.Sprintf("sarama-value-%d", i)
			if m.Offset != int64(i) || string(m.Key) != wantKey || string(m.Value) != wantValue {
				fail("message %d: offset %d key %q value %q", i, m.Offset, m.Key, m.Value)
			}
		case cerr := <-pc.Errors():
			fail("consume: %v", cerr.Err)
		case <-time.After(60 * time.Second):
			fail("consume: stuck after %d of %d", i, n)
		}
	}
	pc.Close()
	consumer.Close()
	fmt.Printf("OK %d\n", n)
}
