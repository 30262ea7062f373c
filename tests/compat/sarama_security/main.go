// SPDX-License-Identifier: Apache-2.0

// Sarama 1.22 (Debian's golang-github-shopify-sarama-dev) over SSL (mutual TLS),
// SASL_PLAINTEXT and SASL_SSL with PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 (SCRAM from
// github.com/xdg-go/scram, Debian's golang-github-xdg-go-scram-dev), every case at once.
// The cases come as JSON on stdin:
//
//	{"cases": [{"name", "broker": "HOST:PORT", "ssl": null | {"ca", "cert"?, "key"?},
//	            "sasl": null | {"mechanism", "username", "password"},
//	            "topic", "group", "txn", "expect": "ok" | "fail"}]}
//
// An "ok" case produces p-0..p-4 with a SyncProducer, commits a transaction of c-0..c-2
// that also commits offset 5 for the group <group>-txn, aborts one of a-0..a-1 (with offset
// 99), produces "end", then reads the topic in a ConsumerGroup with
// read_committed until "end" and commits. A "fail" case tries to produce one record, with
// no retries, and reports the error. One JSON object per case on stdout, one a line.
//
// Sarama 1.22 has no transactional producer (Config.Producer.Transaction came in 1.37), so
// the transaction is driven here with Sarama 1.22's own request types on its own broker
// connections (so over its TLS and SASL): FindCoordinator(TRANSACTION), InitProducerId,
// AddPartitionsToTxn, Produce v3 of a transactional record batch, AddOffsetsToTxn,
// TxnOffsetCommit, EndTxn.
package main

import (
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io/ioutil"
	"os"
	"sync"
	"time"

	"github.com/Shopify/sarama"
	"github.com/xdg-go/scram"
)

type sslConf struct {
	CA   string `json:"ca"`
	Cert string `json:"cert"`
	Key  string `json:"key"`
}

type saslConf struct {
	Mechanism string `json:"mechanism"`
	Username  string `json:"username"`
	Password  string `json:"password"`
}

type testCase struct {
	Name   string    `json:"name"`
	Broker string    `json:"broker"`
	SSL    *sslConf  `json:"ssl"`
	SASL   *saslConf `json:"sasl"`
	Topic  string    `json:"topic"`
	Group  string    `json:"group"`
	Txn    string    `json:"txn"`
	Expect string    `json:"expect"`
}

type result struct {
	Name      string   `json:"name"`
	OK        bool     `json:"ok"`
	Values    []string `json:"values,omitempty"`
	Committed int64    `json:"committed,omitempty"`
	Error     string   `json:"error,omitempty"`
}

// scramClient adapts xdg-go/scram to sarama.SCRAMClient.
type scramClient struct {
	hash scram.HashGeneratorFcn
	conv *scram.ClientConversation
}

func (s *scramClient) Begin(user, password, authzID string) error {
	c, err := s.hash.NewClient(user, password, authzID)
	if err != nil {
		return err
	}
	s.conv = c.NewConversation()
	return nil
}

func (s *scramClient) Step(challenge string) (string, error) { return s.conv.Step(challenge) }
func (s *scramClient) Done() bool                            { return s.conv.Done() }

func config(c *testCase, retries int) (*sarama.Config, error) {
	conf := sarama.NewConfig()
	conf.ClientID = "tally-security-" + c.Name
	conf.Version = sarama.V2_0_0_0
	conf.Net.DialTimeout = 5 * time.Second
	conf.Net.ReadTimeout = 10 * time.Second
	conf.Net.WriteTimeout = 10 * time.Second
	conf.Metadata.Retry.Max = retries
	conf.Metadata.Retry.Backoff = 100 * time.Millisecond
	conf.Producer.Retry.Max = retries
	conf.Producer.Retry.Backoff = 100 * time.Millisecond
	conf.Producer.RequiredAcks = sarama.WaitForAll
	conf.Producer.Return.Successes = true
	conf.Producer.Partitioner = sarama.NewManualPartitioner
	if c.SSL != nil {
		pem, err := ioutil.ReadFile(c.SSL.CA)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("no certificate in %s", c.SSL.CA)
		}
		tc := &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
		if c.SSL.Cert != "" {
			pair, err := tls.LoadX509KeyPair(c.SSL.Cert, c.SSL.Key)
			if err != nil {
				return nil, err
			}
			// Always offered: Go's own choice sends a certificate only when its issuer is
			// among the CAs the server names, and the case of a certificate from another CA
			// must send one.
			tc.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
				return &pair, nil
			}
		}
		conf.Net.TLS.Enable = true
		conf.Net.TLS.Config = tc
	}
	if c.SASL != nil {
		conf.Net.SASL.Enable = true
		conf.Net.SASL.Handshake = true
		conf.Net.SASL.Mechanism = sarama.SASLMechanism(c.SASL.Mechanism)
		conf.Net.SASL.User = c.SASL.Username
		conf.Net.SASL.Password = c.SASL.Password
		switch c.SASL.Mechanism {
		case sarama.SASLTypeSCRAMSHA256:
			conf.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient {
				return &scramClient{hash: sha256.New}
			}
		case sarama.SASLTypeSCRAMSHA512:
			conf.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient {
				return &scramClient{hash: sha512.New}
			}
		}
	}
	return conf, nil
}

func produce(p sarama.SyncProducer, topic string, values ...string) error {
	for _, v := range values {
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Partition: 0,
			Value: sarama.StringEncoder(v)}); err != nil {
			return fmt.Errorf("produce %s: %v", v, err)
		}
	}
	return nil
}

// retriable: the answers a transactional client waits out (the coordinator loading,
// another transaction's markers still being written).
func retriable(e sarama.KError) bool {
	return e == sarama.ErrOffsetsLoadInProgress || e == sarama.ErrConsumerCoordinatorNotAvailable ||
		e == sarama.ErrNotCoordinatorForConsumer || e == sarama.ErrConcurrentTransactions
}

func retry(what string, call func() (sarama.KError, error)) error {
	for i := 0; ; i++ {
		kerr, err := call()
		if err != nil {
			return fmt.Errorf("%s: %v", what, err)
		}
		if kerr == sarama.ErrNoError {
			return nil
		}
		if !retriable(kerr) || i == 100 {
			return fmt.Errorf("%s: %v", what, kerr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func broker(client sarama.Client, conf *sarama.Config, id int32) (*sarama.Broker, error) {
	for _, b := range client.Brokers() {
		if b.ID() == id {
			if err := b.Open(conf); err != nil && err != sarama.ErrAlreadyConnected {
				return nil, err
			}
			return b, nil
		}
	}
	return nil, fmt.Errorf("no broker %d in the metadata", id)
}

// transaction: one transaction of values on partition 0 of topic, with offset for it sent to
// the group <group>-txn (AddOffsetsToTxn, TxnOffsetCommit), committed or aborted.
func transaction(client sarama.Client, conf *sarama.Config, c *testCase, commit bool, offset int64,
	values ...string) error {
	leader, err := client.Leader(c.Topic, 0)
	if err != nil {
		return err
	}
	var coord *sarama.Broker
	if err := retry("FindCoordinator", func() (sarama.KError, error) {
		r, err := leader.FindCoordinator(&sarama.FindCoordinatorRequest{Version: 1,
			CoordinatorKey: c.Txn, CoordinatorType: sarama.CoordinatorTransaction})
		if err != nil {
			return 0, err
		}
		if r.Err == sarama.ErrNoError {
			coord, err = broker(client, conf, r.Coordinator.ID())
		}
		return r.Err, err
	}); err != nil {
		return err
	}
	var pid int64
	var epoch int16
	txn := c.Txn
	if err := retry("InitProducerId", func() (sarama.KError, error) {
		r, err := coord.InitProducerID(&sarama.InitProducerIDRequest{TransactionalID: &txn,
			TransactionTimeout: 30 * time.Second})
		if err != nil {
			return 0, err
		}
		pid, epoch = r.ProducerID, r.ProducerEpoch
		return r.Err, nil
	}); err != nil {
		return err
	}
	if err := retry("AddPartitionsToTxn", func() (sarama.KError, error) {
		r, err := coord.AddPartitionsToTxn(&sarama.AddPartitionsToTxnRequest{TransactionalID: txn,
			ProducerID: pid, ProducerEpoch: epoch,
			TopicPartitions: map[string][]int32{c.Topic: {0}}})
		if err != nil {
			return 0, err
		}
		for _, ps := range r.Errors {
			for _, p := range ps {
				if p.Err != sarama.ErrNoError {
					return p.Err, nil
				}
			}
		}
		return sarama.ErrNoError, nil
	}); err != nil {
		return err
	}
	now := time.Now()
	batch := &sarama.RecordBatch{Version: 2, ProducerID: pid, ProducerEpoch: epoch,
		FirstSequence: 0, IsTransactional: true, FirstTimestamp: now, MaxTimestamp: now,
		LastOffsetDelta: int32(len(values) - 1)}
	for i, v := range values {
		batch.Records = append(batch.Records, &sarama.Record{OffsetDelta: int64(i), Value: []byte(v)})
	}
	req := &sarama.ProduceRequest{TransactionalID: &txn, RequiredAcks: sarama.WaitForAll,
		Timeout: 10000, Version: 3}
	req.AddBatch(c.Topic, 0, batch)
	res, err := leader.Produce(req)
	if err != nil {
		return fmt.Errorf("transactional Produce: %v", err)
	}
	if blk := res.GetBlock(c.Topic, 0); blk == nil || blk.Err != sarama.ErrNoError {
		return fmt.Errorf("transactional Produce: %v", blk)
	}
	group := c.Group + "-txn"
	if err := retry("AddOffsetsToTxn", func() (sarama.KError, error) {
		r, err := coord.AddOffsetsToTxn(&sarama.AddOffsetsToTxnRequest{TransactionalID: txn,
			ProducerID: pid, ProducerEpoch: epoch, GroupID: group})
		if err != nil {
			return 0, err
		}
		return r.Err, nil
	}); err != nil {
		return err
	}
	var gcoord *sarama.Broker
	if err := retry("FindCoordinator(group)", func() (sarama.KError, error) {
		r, err := leader.FindCoordinator(&sarama.FindCoordinatorRequest{Version: 1,
			CoordinatorKey: group, CoordinatorType: sarama.CoordinatorGroup})
		if err != nil {
			return 0, err
		}
		if r.Err == sarama.ErrNoError {
			gcoord, err = broker(client, conf, r.Coordinator.ID())
		}
		return r.Err, err
	}); err != nil {
		return err
	}
	if err := retry("TxnOffsetCommit", func() (sarama.KError, error) {
		r, err := gcoord.TxnOffsetCommit(&sarama.TxnOffsetCommitRequest{TransactionalID: txn,
			GroupID: group, ProducerID: pid, ProducerEpoch: epoch,
			Topics: map[string][]*sarama.PartitionOffsetMetadata{
				c.Topic: {{Partition: 0, Offset: offset}}}})
		if err != nil {
			return 0, err
		}
		for _, ps := range r.Topics {
			for _, p := range ps {
				if p.Err != sarama.ErrNoError {
					return p.Err, nil
				}
			}
		}
		return sarama.ErrNoError, nil
	}); err != nil {
		return err
	}
	return retry("EndTxn", func() (sarama.KError, error) {
		r, err := coord.EndTxn(&sarama.EndTxnRequest{TransactionalID: txn, ProducerID: pid,
			ProducerEpoch: epoch, TransactionResult: commit})
		if err != nil {
			return 0, err
		}
		return r.Err, nil
	})
}

type handler struct {
	values []string
	next   int64
	done   chan struct{}
	once   sync.Once
}

func (h *handler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *handler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h *handler) ConsumeClaim(s sarama.ConsumerGroupSession,
	claim sarama.ConsumerGroupClaim) error {
	for m := range claim.Messages() {
		h.values = append(h.values, string(m.Value))
		s.MarkMessage(m, "")
		if string(m.Value) == "end" {
			h.next = m.Offset + 1
			h.once.Do(func() { close(h.done) })
		}
	}
	return nil
}

func okCase(c *testCase, r *result) error {
	conf, err := config(c, 5)
	if err != nil {
		return err
	}
	client, err := sarama.NewClient([]string{c.Broker}, conf)
	if err != nil {
		return err
	}
	defer client.Close()
	p, err := sarama.NewSyncProducerFromClient(client)
	if err != nil {
		return err
	}
	defer p.Close()
	if err := produce(p, c.Topic, "p-0", "p-1", "p-2", "p-3", "p-4"); err != nil {
		return err
	}
	if err := transaction(client, conf, c, true, 5, "c-0", "c-1", "c-2"); err != nil {
		return err
	}
	if err := transaction(client, conf, c, false, 99, "a-0", "a-1"); err != nil {
		return err
	}
	if err := produce(p, c.Topic, "end"); err != nil {
		return err
	}

	gconf, _ := config(c, 5)
	gconf.Consumer.IsolationLevel = sarama.ReadCommitted
	gconf.Consumer.Offsets.Initial = sarama.OffsetOldest
	gconf.Consumer.Return.Errors = false
	group, err := sarama.NewConsumerGroup([]string{c.Broker}, c.Group, gconf)
	if err != nil {
		return err
	}
	h := &handler{done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	consumed := make(chan error, 1)
	go func() {
		var err error
		for ctx.Err() == nil && err == nil {
			err = group.Consume(ctx, []string{c.Topic}, h)
		}
		consumed <- err
	}()
	select {
	case <-h.done:
	case <-time.After(60 * time.Second):
	}
	cancel()
	// Consume returns once the session is released, its marked offsets committed.
	if err := <-consumed; err != nil {
		group.Close()
		return fmt.Errorf("consumer group: %v", err)
	}
	if err := group.Close(); err != nil {
		return fmt.Errorf("consumer group close: %v", err)
	}
	r.Values, r.Committed = h.values, h.next
	if h.next == 0 {
		return fmt.Errorf("no \"end\" after %d records: %v", len(h.values), h.values)
	}
	return nil
}

// failCase: first one broker connection of its own, so that the error is the connection's
// (the client's is only "run out of available brokers"), then a produce.
func failCase(c *testCase) error {
	conf, err := config(c, 0)
	if err != nil {
		return err
	}
	b := sarama.NewBroker(c.Broker)
	if err := b.Open(conf); err != nil {
		return err
	}
	md, err := b.GetMetadata(&sarama.MetadataRequest{Topics: []string{c.Topic}})
	b.Close()
	if err != nil {
		return fmt.Errorf("metadata: %v", err)
	}
	for _, t := range md.Topics {
		if t.Err != sarama.ErrNoError {
			return fmt.Errorf("metadata of %s: %v", t.Name, t.Err)
		}
	}
	p, err := sarama.NewSyncProducer([]string{c.Broker}, conf)
	if err != nil {
		return err
	}
	defer p.Close()
	return produce(p, c.Topic, "must-not-land")
}

func main() {
	var in struct {
		Cases []testCase `json:"cases"`
	}
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		fmt.Fprintln(os.Stderr, "bad input:", err)
		os.Exit(2)
	}
	results := make([]result, len(in.Cases))
	var wg sync.WaitGroup
	for i := range in.Cases {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c := &in.Cases[i]
			r := &results[i]
			r.Name = c.Name
			var err error
			if c.Expect == "ok" {
				err = okCase(c, r)
			} else {
				err = failCase(c)
			}
			r.OK = err == nil
			if err != nil {
				r.Error = err.Error()
			}
		}(i)
	}
	wg.Wait()
	out := json.NewEncoder(os.Stdout)
	for _, r := range results {
		out.Encode(r)
	}
}
