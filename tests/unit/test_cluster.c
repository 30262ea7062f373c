/* SPDX-License-Identifier: Apache-2.0 */
/* Cluster tests on the virtual-time fixture (cluster_fixture.h): three brokers' partition_sm
 * and the controller's decisions over a fake network, with real faults and checkers. */
#include "harness.h"

#include "base/err.h"
#include "cluster_fixture.h"
#include "replica/partition_sm.h"

TEST(cluster_smoke)
{
    struct cf_options o = {.seed = 1};
    struct cf *c = cf_new(&o);
    REQUIRE(c != NULL);
    REQUIRE(cf_start(c, 3, 3, 2, false, 60000));
    int32_t pa = cf_producer(c, -1, 20, 0);
    int32_t co = cf_consumer(c);
    cf_run(c, 10000);
    CHECK(cf_settle(c, 60000));
    struct cf_report r;
    cf_check(c, &r);
    cf_report_print(c, &r, "smoke");
    CHECK(r.acked_all > 100);
    CHECK(cf_consumed(c, co) > 100);
    (void)pa;
    cf_free(c);
}
