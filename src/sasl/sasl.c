/* SPDX-License-Identifier: Apache-2.0 */
/* sasl: mechanisms, the JAAS parser for PLAIN users, the session's state machine and the
 * PLAIN mechanism (RFC 4616). SCRAM's two steps are in scram.c.
 *
 * A PLAIN token:
 **   [authzid] NUL authcid NUL passwd
 * authzid, when present, must equal authcid (Kafka serves no proxy authorization). */
#include "sasl/sasl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

static const struct {
    enum sasl_mech m;
    const char *name;
} mech_names[] = {
    {SASL_MECH_PLAIN, "PLAIN"},
    {SASL_MECH_SCRAM_SHA_256, "SCRAM-SHA-256"},
    {SASL_MECH_SCRAM_SHA_512, "SCRAM-SHA-512"},
};

const char *sasl_mech_name(enum sasl_mech m)
{
    for (size_t i = 0; i < sizeof mech_names / sizeof mech_names[0]; i++)
        if (mech_names[i].m == m)
            return mech_names[i].name;
    return "NONE";
}

enum sasl_mech sasl_mech_from_name(const char *name)
{
    for (size_t i = 0; name && i < sizeof mech_names / sizeof mech_names[0]; i++)
        if (strcmp(mech_names[i].name, name) == 0)
            return mech_names[i].m;
    return SASL_MECH_NONE;
}

int sasl_config_set_mechanisms(struct sasl_config *c, const char *list, char *why, size_t whylen)
{
    enum sasl_mech found[SASL_MAX_MECHS];
    size_t n = 0;
    const char *p = list ? list : "";

    while (*p) {
        char name[64];
        size_t len = strcspn(p, ",");
        const char *q = p;
        size_t k = len;
        while (k > 0 && *q == ' ')
            q++, k--;
        while (k > 0 && q[k - 1] == ' ')
            k--;
        if (k == 0 || k >= sizeof name) {
            snprintf(why, whylen, "sasl.enabled.mechanisms: empty or overlong entry in '%.64s'",
                     list);
            return -1;
        }
        memcpy(name, q, k);
        name[k] = '\0';
        enum sasl_mech m = sasl_mech_from_name(name);
        if (m == SASL_MECH_NONE) {
            snprintf(why, whylen,
                     "sasl.enabled.mechanisms: %s is not supported by Tally (supported: PLAIN, "
                     "SCRAM-SHA-256, SCRAM-SHA-512)",
                     name);
            return -1;
        }
        for (size_t i = 0; i < n; i++)
            if (found[i] == m) {
                snprintf(why, whylen, "sasl.enabled.mechanisms: %s is listed twice", name);
                return -1;
            }
        found[n++] = m;
        p += len;
        if (*p == ',')
            p++;
    }
    if (n == 0) {
        snprintf(why, whylen,
                 "sasl.enabled.mechanisms is empty (supported: PLAIN, SCRAM-SHA-256, "
                 "SCRAM-SHA-512)");
        return -1;
    }
    memcpy(c->mechs, found, n * sizeof found[0]);
    c->n_mechs = n;
    return 0;
}

bool sasl_config_enabled(const struct sasl_config *c, enum sasl_mech m)
{
    for (size_t i = 0; i < c->n_mechs; i++)
        if (c->mechs[i] == m)
            return true;
    return false;
}

/* ---- JAAS ------------------------------------------------------------------------------- */

struct jaas_lexer {
    const char *p;
};

static void skip_space(struct jaas_lexer *lx)
{
    while (*lx->p == ' ' || *lx->p == '\t' || *lx->p == '\n' || *lx->p == '\r')
        lx->p++;
}

static bool word_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '_' || ch == '.' || ch == '-' || ch == '$';
}

/* A bare word into out (at most cap-1 bytes). Returns its length, 0 when there is none, or
 * -1 when it does not fit. */
static int lex_word(struct jaas_lexer *lx, char *out, size_t cap)
{
    size_t n = 0;
    skip_space(lx);
    while (word_char(*lx->p)) {
        if (n + 1 >= cap)
            return -1;
        out[n++] = *lx->p++;
    }
    out[n] = '\0';
    return (int)n;
}

/* An option's value: "..." with \" and \\ escapes, or a bare word. Returns its length or -1
 * (unterminated, bad escape, too long, missing). */
static int lex_value(struct jaas_lexer *lx, char *out, size_t cap)
{
    size_t n = 0;
    skip_space(lx);
    if (*lx->p != '"') {
        int w = lex_word(lx, out, cap);
        return w > 0 ? w : -1;
    }
    lx->p++;
    while (*lx->p != '"') {
        char ch = *lx->p;
        if (ch == '\0')
            return -1;
        if (ch == '\\') {
            ch = lx->p[1];
            if (ch != '"' && ch != '\\')
                return -1;
            lx->p++;
        }
        if (n + 1 >= cap)
            return -1;
        out[n++] = ch;
        lx->p++;
    }
    lx->p++;
    out[n] = '\0';
    return (int)n;
}

/* Reads the next key="value" option of a login module (`jaas` the whole text, `mname` the
 * mechanism's name for messages): 1 with key and value filled in, 0 at the ';' that ends the
 * options (left unread), -1 after writing why. */
static int lex_option(struct jaas_lexer *lx, const char *jaas, const char *mname, char *key,
                      size_t key_cap, char *value, size_t value_cap, char *why, size_t whylen)
{
    skip_space(lx);
    if (*lx->p == ';')
        return 0;
    int kl = lex_word(lx, key, key_cap);
    skip_space(lx);
    if (kl <= 0 || *lx->p != '=') {
        snprintf(why, whylen, "%s sasl.jaas.config: expected key=\"value\" or ';' at offset %zu",
                 mname, (size_t)(lx->p - jaas));
        return -1;
    }
    lx->p++;
    if (lex_value(lx, value, value_cap) < 0) {
        snprintf(why, whylen,
                 "%s sasl.jaas.config: the value of %s is unterminated, badly escaped or "
                 "longer than %d bytes",
                 mname, key, SASL_MAX_NAME);
        return -1;
    }
    return 1;
}

static const char *module_class(enum sasl_mech m)
{
    return m == SASL_MECH_PLAIN ? "org.apache.kafka.common.security.plain.PlainLoginModule"
                                : "org.apache.kafka.common.security.scram.ScramLoginModule";
}

int sasl_config_add_jaas(struct sasl_config *c, enum sasl_mech m, const char *jaas, char *why,
                         size_t whylen)
{
    struct jaas_lexer lx = {jaas ? jaas : ""};
    char cls[128], flag[32], key[SASL_MAX_NAME + 8], value[SASL_MAX_NAME + 1];
    struct sasl_user *users = NULL;
    size_t n_users = 0;
    const char *mname = sasl_mech_name(m);

    if (lex_word(&lx, cls, sizeof cls) <= 0 || strcmp(cls, module_class(m)) != 0) {
        snprintf(why, whylen, "%s sasl.jaas.config must start with %s", mname, module_class(m));
        goto err;
    }
    if (lex_word(&lx, flag, sizeof flag) <= 0 ||
        (strcmp(flag, "required") != 0 && strcmp(flag, "requisite") != 0 &&
         strcmp(flag, "sufficient") != 0 && strcmp(flag, "optional") != 0)) {
        snprintf(why, whylen,
                 "%s sasl.jaas.config: the login module must be followed by required, "
                 "requisite, sufficient or optional",
                 mname);
        goto err;
    }
    for (;;) {
        int o = lex_option(&lx, jaas, mname, key, sizeof key, value, sizeof value, why, whylen);
        if (o == 0)
            break;
        if (o < 0)
            goto err;
        if (strncmp(key, "user_", 5) == 0) {
            if (m != SASL_MECH_PLAIN) {
                snprintf(why, whylen,
                         "%s sasl.jaas.config: user_ entries are PLAIN's; SCRAM users are "
                         "created with AlterUserScramCredentials",
                         mname);
                goto err;
            }
            if (key[5] == '\0') {
                snprintf(why, whylen, "%s sasl.jaas.config: user_ needs a user name", mname);
                goto err;
            }
            for (size_t i = 0; i < c->n_users; i++)
                if (strcmp(c->users[i].name, key + 5) == 0)
                    goto dup;
            for (size_t i = 0; i < n_users; i++)
                if (strcmp(users[i].name, key + 5) == 0)
                    goto dup;
            struct sasl_user *nu = realloc(users, (n_users + 1) * sizeof *nu);
            if (nu == NULL)
                goto err_nomem;
            users = nu;
            users[n_users].name = strdup(key + 5);
            users[n_users].password = strdup(value);
            n_users++;
            if (users[n_users - 1].name == NULL || users[n_users - 1].password == NULL)
                goto err_nomem;
        } else if (strcmp(key, "username") != 0 && strcmp(key, "password") != 0) {
            snprintf(why, whylen, "%s sasl.jaas.config: unknown option %s (username, password%s)",
                     mname, key, m == SASL_MECH_PLAIN ? ", user_<name>" : "");
            goto err;
        }
    }
    lx.p++;
    skip_space(&lx);
    if (*lx.p != '\0') {
        snprintf(why, whylen,
                 "%s sasl.jaas.config: text after the final ';' (exactly one login module)", mname);
        goto err;
    }
    if (n_users > 0) {
        struct sasl_user *all = realloc(c->users, (c->n_users + n_users) * sizeof *all);
        if (all == NULL)
            goto err_nomem;
        memcpy(all + c->n_users, users, n_users * sizeof *users);
        c->users = all;
        c->n_users += n_users;
    }
    free(users);
    return 0;

dup:
    snprintf(why, whylen, "%s sasl.jaas.config: user %s is listed twice", mname, key + 5);
    goto err;
err_nomem:
    snprintf(why, whylen, "out of memory");
err:
    for (size_t i = 0; i < n_users; i++) {
        free(users[i].name);
        free(users[i].password);
    }
    free(users);
    return -1;
}

int sasl_jaas_login(enum sasl_mech m, const char *jaas, char *user, size_t user_cap, char *pass,
                    size_t pass_cap, char *why, size_t whylen)
{
    struct jaas_lexer lx = {jaas ? jaas : ""};
    char word[128], key[SASL_MAX_NAME + 8], value[SASL_MAX_NAME + 1];
    const char *mname = sasl_mech_name(m);
    bool got_user = false, got_pass = false;
    int rc = -1;

    if (lex_word(&lx, word, sizeof word) <= 0 || strcmp(word, module_class(m)) != 0 ||
        lex_word(&lx, word, sizeof word) <= 0) {
        snprintf(why, whylen, "%s sasl.jaas.config must start with %s required", mname,
                 module_class(m));
        goto out;
    }
    for (;;) {
        int o = lex_option(&lx, jaas, mname, key, sizeof key, value, sizeof value, why, whylen);
        if (o == 0)
            break;
        if (o < 0)
            goto out;
        if (strcmp(key, "username") == 0) {
            got_user = strlen(value) < user_cap;
            snprintf(user, user_cap, "%s", value);
        } else if (strcmp(key, "password") == 0) {
            got_pass = strlen(value) < pass_cap;
            snprintf(pass, pass_cap, "%s", value);
        }
    }
    if (!got_user || !got_pass) {
        snprintf(why, whylen,
                 "%s sasl.jaas.config has no username=\"...\" password=\"...\" (the broker's own "
                 "login to other brokers)",
                 mname);
        goto out;
    }
    rc = 0;
out:
    memset(value, 0, sizeof value);
    return rc;
}

void sasl_config_free(struct sasl_config *c)
{
    for (size_t i = 0; i < c->n_users; i++) {
        free(c->users[i].name);
        if (c->users[i].password)
            memset(c->users[i].password, 0, strlen(c->users[i].password));
        free(c->users[i].password);
    }
    free(c->users);
    c->users = NULL;
    c->n_users = 0;
}

/* ---- the session ------------------------------------------------------------------------- */

bool sasl_equal_ct(const uint8_t *a, const uint8_t *b, size_t n)
{
    volatile uint8_t d = 0;
    for (size_t i = 0; i < n; i++)
        d |= a[i] ^ b[i];
    return d == 0;
}

void sasl_session_init(struct sasl_session *s, const struct sasl_config *cfg)
{
    memset(s, 0, sizeof *s);
    s->cfg = cfg;
    s->state = SASL_WAIT_HANDSHAKE;
}

int sasl_handshake(struct sasl_session *s, const char *mechanism)
{
    if (s->state != SASL_WAIT_HANDSHAKE) {
        s->state = SASL_FAILED;
        return ERR_ILLEGAL_SASL_STATE;
    }
    enum sasl_mech m = sasl_mech_from_name(mechanism);
    if (m == SASL_MECH_NONE || !sasl_config_enabled(s->cfg, m)) {
        s->state = SASL_FAILED;
        return ERR_UNSUPPORTED_SASL_MECHANISM;
    }
    s->mech = m;
    /* Kafka requires a re-authentication to use the session's mechanism; like Kafka, the
     * handshake itself is accepted and the exchange fails at its first token. */
    s->state = s->reauth && m != s->reauth_mech ? SASL_REAUTH_BAD_MECH : SASL_WAIT_TOKEN;
    return 0;
}

/* Copies the token's field at *pos (up to the next NUL or the end) into out; moves *pos past
 * the NUL. Returns the length, or -1 when it is longer than SASL_MAX_NAME. */
static int plain_field(const uint8_t *t, size_t len, size_t *pos, char *out)
{
    size_t start = *pos, end = start;
    while (end < len && t[end] != 0)
        end++;
    if (end - start > SASL_MAX_NAME)
        return -1;
    memcpy(out, t + start, end - start);
    out[end - start] = '\0';
    *pos = end < len ? end + 1 : end;
    return (int)(end - start);
}

static int plain_step(struct sasl_session *s, const uint8_t *t, size_t len)
{
    char authz[SASL_MAX_NAME + 1], user[SASL_MAX_NAME + 1], pass[SASL_MAX_NAME + 1];
    size_t pos = 0, nuls = 0;
    int ul, pl;

    for (size_t i = 0; i < len; i++)
        nuls += t[i] == 0;
    if (nuls != 2 || plain_field(t, len, &pos, authz) < 0 ||
        (ul = plain_field(t, len, &pos, user)) <= 0 || (pl = plain_field(t, len, &pos, pass)) < 0)
        goto fail;
    snprintf(s->user, sizeof s->user, "%s", user);
    if (authz[0] != '\0' && strcmp(authz, user) != 0)
        goto fail;
    /* The same work for an unknown user as for a known one: the time taken tells nothing. */
    const struct sasl_user *found = NULL;
    for (size_t i = 0; i < s->cfg->n_users; i++)
        if (strcmp(s->cfg->users[i].name, user) == 0)
            found = &s->cfg->users[i];
    uint8_t want[SASL_MAX_NAME + 1] = {0}, got[SASL_MAX_NAME + 1] = {0};
    size_t wl = found ? strlen(found->password) : 0;
    if (found)
        memcpy(want, found->password, wl);
    memcpy(got, pass, (size_t)pl);
    bool same = sasl_equal_ct(want, got, sizeof want) && wl == (size_t)pl;
    memset(pass, 0, sizeof pass);
    memset(got, 0, sizeof got);
    memset(want, 0, sizeof want);
    if (!found || !same)
        goto fail;
    s->reply_len = 0;
    s->state = SASL_AUTHENTICATED;
    return 0;

fail:
    s->state = SASL_FAILED;
    return ERR_SASL_AUTHENTICATION_FAILED;
}

int sasl_step(struct sasl_session *s, const uint8_t *token, size_t len)
{
    s->reply_len = 0;
    if (s->state == SASL_REAUTH_BAD_MECH) {
        s->refusal = SASL_REFUSED_MECHANISM_CHANGE;
        s->state = SASL_FAILED;
        return ERR_SASL_AUTHENTICATION_FAILED;
    }
    if (s->state != SASL_WAIT_TOKEN && s->state != SASL_WAIT_FINAL) {
        s->state = SASL_FAILED;
        return ERR_ILLEGAL_SASL_STATE;
    }
    if (len > SASL_MAX_TOKEN) {
        s->state = SASL_FAILED;
        return ERR_SASL_AUTHENTICATION_FAILED;
    }
    int rc;
    if (s->mech == SASL_MECH_PLAIN)
        rc = plain_step(s, token, len);
    else
        rc = s->state == SASL_WAIT_TOKEN ? sasl_scram_first(s, token, len)
                                         : sasl_scram_final(s, token, len);
    if (rc != 0) {
        s->state = SASL_FAILED;
        return rc;
    }
    /* KIP-368: a connection keeps its principal for life; valid credentials of another user
     * end it (Kafka's ensurePrincipalUnchanged). */
    if (s->state == SASL_AUTHENTICATED && s->reauth && strcmp(s->user, s->reauth_user) != 0) {
        s->refusal = SASL_REFUSED_PRINCIPAL_CHANGE;
        s->reply_len = 0;
        s->state = SASL_FAILED;
        return ERR_SASL_AUTHENTICATION_FAILED;
    }
    return 0;
}

/* ---- KIP-368 re-authentication ------------------------------------------------------------ */

int64_t sasl_session_lifetime_ms(int64_t max_reauth_ms, int64_t credential_left_ms)
{
    bool has_max = max_reauth_ms > 0, has_cred = credential_left_ms != SASL_NO_EXPIRY;
    if (!has_max && !has_cred)
        return -1;
    int64_t life = !has_cred                            ? max_reauth_ms
                   : !has_max                           ? credential_left_ms
                   : credential_left_ms < max_reauth_ms ? credential_left_ms
                                                        : max_reauth_ms;
    return life < 0 ? 0 : life;
}

int sasl_reauth_begin(struct sasl_session *s)
{
    if (s->state != SASL_AUTHENTICATED)
        return ERR_ILLEGAL_SASL_STATE;
    s->reauth = true;
    s->reauth_mech = s->mech;
    memcpy(s->reauth_user, s->user, sizeof s->reauth_user);
    s->refusal = SASL_REFUSED_NONE;
    s->reply_len = 0;
    sasl_session_free(s);
    s->state = SASL_WAIT_HANDSHAKE;
    return 0;
}
