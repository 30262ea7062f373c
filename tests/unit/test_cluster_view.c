/* SPDX-License-Identifier: Apache-2.0 */
/* The pure pieces of the cluster commands (tools/cluster_view.h): cluster ids in Kafka's form,
 * a partition's health as kafka-topics.sh judges it, the metadata quorum's lag and what an
 * election's result code means for the exit status. */
#include "../../tools/cluster_view.h"
#include "harness.h"

#include <stdlib.h>

/* A known UUID and its Kafka string (Uuid.toString: unpadded base64url of the 16 bytes). */
static const uint8_t known_uuid[16] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
                                       0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0xff};

TEST(cluster_id_encodes_as_kafka_does)
{
    char id[TALLY_CLUSTER_ID_LEN + 1];
    uint8_t back[16];

    tally_cluster_id_encode(known_uuid, id);
    CHECK_EQ_STR(id, "AAECAwQFBgcICQoLDA0O_w");
    REQUIRE(tally_cluster_id_decode(id, back) == 0);
    CHECK(memcmp(back, known_uuid, 16) == 0);
}

TEST(cluster_id_decode_refuses_what_is_not_16_bytes)
{
    uint8_t out[16];
    CHECK_EQ_INT(tally_cluster_id_decode("", out), -1);
    CHECK_EQ_INT(tally_cluster_id_decode("AAECAwQFBgcICQoLDA0O_", out), -1);   /* 21 */
    CHECK_EQ_INT(tally_cluster_id_decode("AAECAwQFBgcICQoLDA0O_wA", out), -1); /* 23 */
    CHECK_EQ_INT(tally_cluster_id_decode("AAECAwQFBgcICQoLDA0O+w", out), -1);  /* not url */
    CHECK_EQ_INT(tally_cluster_id_decode("AAECAwQFBgcICQoLDA0O_x", out), -1);  /* stray bits */
}

TEST(cluster_id_from_random_is_a_version_4_uuid)
{
    char id[TALLY_CLUSTER_ID_LEN + 1];
    uint8_t r[16], back[16];

    memset(r, 0xff, sizeof r);
    r[0] = 0x10; /* 'E...': does not start with '-' */
    REQUIRE(tally_cluster_id_from_random(r, id));
    REQUIRE(tally_cluster_id_decode(id, back) == 0);
    CHECK_EQ_INT(back[6] >> 4, 4);      /* version 4 */
    CHECK_EQ_INT(back[8] >> 6, 2);      /* RFC 4122 variant */
    CHECK_EQ_INT(back[6] & 0x0f, 0x0f); /* the random bits are kept */
    CHECK_EQ_INT(back[0], 0x10);
    CHECK_EQ_INT(back[15], 0xff);
}

TEST(cluster_id_from_random_refuses_a_leading_dash)
{
    char id[TALLY_CLUSTER_ID_LEN + 1];
    uint8_t r[16] = {0};

    r[0] = 0xf8; /* top six bits 62: '-' */
    CHECK(!tally_cluster_id_from_random(r, id));
    CHECK(id[0] == '-');
    r[0] = 0xfc; /* 63: '_' is fine */
    CHECK(tally_cluster_id_from_random(r, id));
    CHECK(id[0] == '_');
}

TEST(cluster_id_new_ids_differ_and_decode)
{
    char a[TALLY_CLUSTER_ID_LEN + 1], b[TALLY_CLUSTER_ID_LEN + 1];
    uint8_t u[16];

    REQUIRE(tally_cluster_id_new(a) == 0);
    REQUIRE(tally_cluster_id_new(b) == 0);
    CHECK_EQ_INT(strlen(a), TALLY_CLUSTER_ID_LEN);
    CHECK(strcmp(a, b) != 0);
    CHECK(a[0] != '-');
    REQUIRE(tally_cluster_id_decode(a, u) == 0);
    CHECK_EQ_INT(u[6] >> 4, 4);
}

TEST(partition_flags_follow_kafka_topics)
{
    const int32_t live3[] = {1, 2, 3}, live2[] = {1, 3};

    /* Healthy: leader live, ISR = replicas. */
    CHECK_EQ_INT(tally_partition_flags(2, 3, 3, live3, 3), 0);
    /* A follower out of the ISR. */
    CHECK_EQ_INT(tally_partition_flags(1, 3, 2, live2, 2), TALLY_PART_UNDER_REPLICATED);
    /* No leader at all, and the last ISR member standing. */
    CHECK_EQ_INT(tally_partition_flags(-1, 3, 1, live2, 2),
                 TALLY_PART_OFFLINE | TALLY_PART_UNDER_REPLICATED);
    /* A leader that Metadata does not list as a broker (fenced) is no leader. */
    CHECK_EQ_INT(tally_partition_flags(2, 3, 3, live2, 2), TALLY_PART_OFFLINE);
    CHECK_EQ_INT(tally_partition_flags(2, 1, 1, NULL, 0), TALLY_PART_OFFLINE);
    CHECK_EQ_STR(tally_partition_status(0), "ok");
    CHECK_EQ_STR(tally_partition_status(TALLY_PART_UNDER_REPLICATED), "under-replicated");
    CHECK_EQ_STR(tally_partition_status(TALLY_PART_OFFLINE), "offline");
    CHECK_EQ_STR(tally_partition_status(TALLY_PART_OFFLINE | TALLY_PART_UNDER_REPLICATED),
                 "offline,under-replicated");
}

TEST(quorum_lag_and_times)
{
    char buf[32];

    CHECK_EQ_INT(tally_quorum_lag(120, 120), 0);
    CHECK_EQ_INT(tally_quorum_lag(120, 100), 20);
    CHECK_EQ_INT(tally_quorum_lag(120, -1), -1); /* never heard of */
    CHECK_EQ_INT(tally_quorum_lag(-1, 5), -1);
    CHECK_EQ_INT(tally_quorum_lag(100, 120), 0); /* ahead of a stale leader figure */
    tally_format_ago(5000, -1, buf, sizeof buf);
    CHECK_EQ_STR(buf, "-");
    tally_format_ago(5000, 4980, buf, sizeof buf);
    CHECK_EQ_STR(buf, "20 ms ago");
    tally_format_ago(5000, 5010, buf, sizeof buf);
    CHECK_EQ_STR(buf, "0 ms ago");
}

TEST(elect_outcomes)
{
    CHECK_EQ_INT(tally_elect_outcome(0), TALLY_ELECTED);
    CHECK_EQ_INT(tally_elect_outcome(84), TALLY_ELECTION_NOT_NEEDED);
    CHECK_EQ_INT(tally_elect_outcome(80), TALLY_ELECTION_FAILED); /* preferred not available */
    CHECK_EQ_INT(tally_elect_outcome(83), TALLY_ELECTION_FAILED); /* eligible not available */
    CHECK_EQ_INT(tally_elect_outcome(3), TALLY_ELECTION_FAILED);
}
