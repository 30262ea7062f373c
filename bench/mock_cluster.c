/* SPDX-License-Identifier: Apache-2.0 */
/* mock_cluster: librdkafka's in-memory mock cluster as a stand-alone peer for the
 * client's-view benchmark. Usage: mock_cluster [TOPIC PARTITIONS]... Creates the
 * topics, prints the bootstrap address on stdout (one line) and runs until SIGTERM
 * or SIGINT. */
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

/* The handle never connects anywhere; its "no bootstrap.servers" warning is noise. */
static void quiet_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    (void)rk;
    (void)level;
    (void)fac;
    (void)buf;
}

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

int main(int argc, char **argv)
{
    char errstr[512];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();

    if (argc % 2 != 1) {
        fprintf(stderr, "usage: mock_cluster [TOPIC PARTITIONS]...\n");
        return 2;
    }
    rd_kafka_conf_set_log_cb(conf, quiet_log);
    /* The handle only does the mock cluster's book-keeping; it never connects. */
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
    if (rk == NULL) {
        fprintf(stderr, "mock_cluster: %s\n", errstr);
        return 1;
    }
    rd_kafka_mock_cluster_t *mc = rd_kafka_mock_cluster_new(rk, 1);
    if (mc == NULL) {
        fprintf(stderr, "mock_cluster: cannot create the mock cluster\n");
        rd_kafka_destroy(rk);
        return 1;
    }
    for (int i = 1; i + 1 < argc; i += 2) {
        rd_kafka_resp_err_t err = rd_kafka_mock_topic_create(mc, argv[i], atoi(argv[i + 1]), 1);
        if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            fprintf(stderr, "mock_cluster: topic %s: %s\n", argv[i], rd_kafka_err2str(err));
            return 1;
        }
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    printf("%s\n", rd_kafka_mock_cluster_bootstraps(mc));
    fflush(stdout);
    while (!stop)
        pause();
    rd_kafka_mock_cluster_destroy(mc);
    rd_kafka_destroy(rk);
    return 0;
}
