/* SPDX-License-Identifier: Apache-2.0 */
/* err: names of error codes, for log lines and the CLI. */
#include "err.h"

const char *err_name(int err)
{
    switch (err) {
#define ERR_NAME_CASE(name, value)                                                                 \
    case ERR_##name:                                                                               \
        return #name;
        ERR_LIST(ERR_NAME_CASE)
#undef ERR_NAME_CASE
    }
    return "UNKNOWN";
}
