/* SPDX-License-Identifier: Apache-2.0 */
/* kafka_names: Kafka's command-line tools by their names (kafka-topics.sh, kafka-configs.sh,
 * kafka-consumer-groups.sh, kafka-transactions.sh, kafka-log-dirs.sh,
 * kafka-reassign-partitions.sh). The tally binary runs as one of them when it is called by that
 * name (a link to it, busybox-style): the Kafka options are translated into a call of the tally
 * command that does the same (with struct tally_ctx's kafka_format set, so that it prints as
 * Kafka's tool does), and an option Tally does not map is refused with a message naming the
 * tally command to use instead. As Kafka's tools, every wrapper exits 0 on success and 1 on any
 * failure, a bad command line included. */
#ifndef TALLY_TOOLS_KAFKA_NAMES_H
#define TALLY_TOOLS_KAFKA_NAMES_H

#include <stdbool.h>

/* True when prog (the last path component of argv[0]) is one of the names above. */
bool kafka_names_is_tool(const char *prog);

/* Runs the tool named prog with the command line argv[1..argc-1] (argv[0] is not read).
 * Precondition: kafka_names_is_tool(prog). Returns the process exit code, 0 or 1. */
int kafka_names_main(const char *prog, int argc, char **argv);

#endif
