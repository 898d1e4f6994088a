/* ecoready connector smoke program for C (libmariadb, the MariaDB Connector/C).
 *
 * smoke-c --host H --port P --user U --password-file F --database D [--connect-timeout S]
 * prints one JSON line per check: connect, version, prepared_utf8mb4, rollback,
 * wrong_password. The password is read from a file, never taken from argv.
 */
#include <mysql.h>
#include <mysqld_error.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "ecoready <dolphin> <check mark> <u umlaut>": 4-, 3- and 2-byte UTF-8 sequences. */
static const char TEXT[] = "ecoready \xF0\x9F\x90\xAC \xE2\x9C\x93 \xC3\xBC";
static const char TEXT_HEX[] = "65636F726561647920F09F90AC20E29C9320C3BC";

static const char *host, *user, *database, *password_file;
static unsigned int port = 3306, connect_timeout = 5;
static char password[1024];
static char detail[2048];
static int failures;

static void emit(const char *check, int ok, const char *text) {
    printf("{\"check\": \"%s\", \"ok\": %s, \"detail\": \"", check, ok ? "true" : "false");
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (*p == '"' || *p == '\\') printf("\\%c", *p);
        else if (*p < 0x20) printf("\\u%04x", *p);
        else putchar(*p);
    }
    printf("\"}\n");
    fflush(stdout); /* line by line: a killed run still shows the checks it finished */
    if (!ok) failures++;
}

static void say(const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(detail, sizeof detail, fmt, args);
    va_end(args);
}

static int fail_sql(MYSQL *db, const char *statement) {
    say("%s: error %u: %s", statement, mysql_errno(db), mysql_error(db));
    return 0;
}

static int fail_stmt(MYSQL_STMT *stmt, const char *statement) {
    say("%s: error %u: %s", statement, mysql_stmt_errno(stmt), mysql_stmt_error(stmt));
    mysql_stmt_close(stmt);
    return 0;
}

static MYSQL *open_connection(const char *pw) {
    MYSQL *db = mysql_init(NULL);
    unsigned int protocol = MYSQL_PROTOCOL_TCP;
    mysql_options(db, MYSQL_OPT_PROTOCOL, &protocol);
    mysql_options(db, MYSQL_OPT_CONNECT_TIMEOUT, &connect_timeout);
    mysql_options(db, MYSQL_SET_CHARSET_NAME, "utf8mb4");
    mysql_real_connect(db, host, user, pw, database, port, NULL, 0); /* mysql_errno() tells */
    return db;
}

static int run(MYSQL *db, const char *statement) {
    if (mysql_query(db, statement)) return fail_sql(db, statement);
    MYSQL_RES *res = mysql_store_result(db);
    if (res) mysql_free_result(res);
    return 1;
}

/* One value of the first row of `statement`, or -1. */
static long long scalar(MYSQL *db, const char *statement, int column) {
    if (mysql_query(db, statement)) { fail_sql(db, statement); return -1; }
    MYSQL_RES *res = mysql_store_result(db);
    MYSQL_ROW row = res ? mysql_fetch_row(res) : NULL;
    long long value = (row && row[column]) ? atoll(row[column]) : -1;
    if (!row) say("%s: no row", statement);
    if (res) mysql_free_result(res);
    return value;
}

static const char STATUS[] = "SHOW SESSION STATUS LIKE 'Com_stmt_prepare'";

static int check_version(MYSQL *db) {
    const char *statement = "SELECT VERSION()";
    if (mysql_query(db, statement)) return fail_sql(db, statement);
    MYSQL_RES *res = mysql_store_result(db);
    MYSQL_ROW row = res ? mysql_fetch_row(res) : NULL;
    int ok = row && row[0] && row[0][0];
    if (ok) say("%s", row[0]);
    else say("%s returned no version", statement);
    if (res) mysql_free_result(res);
    return ok;
}

static int check_prepared(MYSQL *db) {
    if (!run(db, "DROP TABLE IF EXISTS smoke_utf8")) return 0;
    if (!run(db, "CREATE TABLE smoke_utf8 (id INT PRIMARY KEY, txt VARCHAR(64) CHARACTER SET utf8mb4 "
                 "COLLATE utf8mb4_bin NOT NULL) ENGINE=InnoDB")) return 0;
    long long before = scalar(db, STATUS, 1);
    if (before < 0) return 0;

    const char *insert = "INSERT INTO smoke_utf8 (id, txt) VALUES (?, ?)";
    MYSQL_STMT *stmt = mysql_stmt_init(db);
    if (mysql_stmt_prepare(stmt, insert, strlen(insert))) return fail_stmt(stmt, insert);
    int id = 1;
    unsigned long text_length = strlen(TEXT);
    MYSQL_BIND params[2];
    memset(params, 0, sizeof params);
    params[0].buffer_type = MYSQL_TYPE_LONG;
    params[0].buffer = &id;
    params[1].buffer_type = MYSQL_TYPE_STRING;
    params[1].buffer = (void *)TEXT;
    params[1].buffer_length = text_length;
    params[1].length = &text_length;
    if (mysql_stmt_bind_param(stmt, params) || mysql_stmt_execute(stmt)) return fail_stmt(stmt, insert);
    mysql_stmt_close(stmt);

    const char *select = "SELECT txt, HEX(txt) FROM smoke_utf8 WHERE id = ?";
    stmt = mysql_stmt_init(db);
    if (mysql_stmt_prepare(stmt, select, strlen(select))) return fail_stmt(stmt, select);
    MYSQL_BIND key;
    memset(&key, 0, sizeof key);
    key.buffer_type = MYSQL_TYPE_LONG;
    key.buffer = &id;
    char got[256] = {0}, hex[512] = {0};
    unsigned long got_length = 0, hex_length = 0;
    MYSQL_BIND out[2];
    memset(out, 0, sizeof out);
    out[0].buffer_type = MYSQL_TYPE_STRING;
    out[0].buffer = got;
    out[0].buffer_length = sizeof got - 1;
    out[0].length = &got_length;
    out[1].buffer_type = MYSQL_TYPE_STRING;
    out[1].buffer = hex;
    out[1].buffer_length = sizeof hex - 1;
    out[1].length = &hex_length;
    if (mysql_stmt_bind_param(stmt, &key) || mysql_stmt_execute(stmt) || mysql_stmt_bind_result(stmt, out))
        return fail_stmt(stmt, select);
    int fetched = mysql_stmt_fetch(stmt);
    if (fetched == 1) return fail_stmt(stmt, select);
    mysql_stmt_close(stmt);
    if (fetched == MYSQL_NO_DATA) { say("%s: the inserted row is not there", select); return 0; }

    long long after = scalar(db, STATUS, 1);
    if (after < 0) return 0;
    run(db, "DROP TABLE smoke_utf8");
    if (got_length != text_length || memcmp(got, TEXT, text_length) != 0) {
        say("read back %lu bytes that differ from the %lu sent (server stored %s, sent %s)", got_length,
            text_length, hex, TEXT_HEX);
        return 0;
    }
    if (strcmp(hex, TEXT_HEX) != 0) {
        say("the driver round-trips it but the server stored %s, not %s (double encoding?)", hex, TEXT_HEX);
        return 0;
    }
    if (after - before < 2) {
        say("%lu bytes exact, but the server saw no prepared statement (Com_stmt_prepare +%lld)", text_length,
            after - before);
        return 0;
    }
    say("server-side prepared statements (Com_stmt_prepare +%lld): '%s' (%lu bytes) round-tripped byte-exact",
        after - before, TEXT, text_length);
    return 1;
}

static int check_rollback(MYSQL *db) {
    if (!run(db, "DROP TABLE IF EXISTS smoke_tx") ||
        !run(db, "CREATE TABLE smoke_tx (id INT PRIMARY KEY) ENGINE=InnoDB")) return 0;
    if (mysql_autocommit(db, 0)) return fail_sql(db, "autocommit off");
    if (!run(db, "INSERT INTO smoke_tx (id) VALUES (1)")) return 0;
    long long inside = scalar(db, "SELECT COUNT(*) FROM smoke_tx", 0);
    if (mysql_rollback(db)) return fail_sql(db, "ROLLBACK");
    long long after = scalar(db, "SELECT COUNT(*) FROM smoke_tx", 0);
    mysql_autocommit(db, 1);
    run(db, "DROP TABLE smoke_tx");
    if (inside != 1 || after != 0) {
        say("rows inside the transaction %lld (want 1), after rollback %lld (want 0)", inside, after);
        return 0;
    }
    say("insert seen inside the transaction, gone after mysql_rollback()");
    return 1;
}

static int check_wrong_password(void) {
    char wrong[1100];
    snprintf(wrong, sizeof wrong, "%s-wrong", password);
    MYSQL *db = open_connection(wrong);
    unsigned int code = mysql_errno(db);
    int ok = code == ER_ACCESS_DENIED_ERROR;
    if (code == 0) say("a wrong password was accepted");
    else say("error %u%s: %s", code, ok ? " (access denied)" : ", not 1045 access denied", mysql_error(db));
    mysql_close(db);
    return ok;
}

static void usage(void) {
    fprintf(stderr, "usage: smoke-c --host H --port P --user U --password-file F --database D [--connect-timeout S]\n");
    exit(2);
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc) usage();
        const char *name = argv[i], *value = argv[++i];
        if (!strcmp(name, "--host")) host = value;
        else if (!strcmp(name, "--port")) port = (unsigned int)atoi(value);
        else if (!strcmp(name, "--user")) user = value;
        else if (!strcmp(name, "--password-file")) password_file = value;
        else if (!strcmp(name, "--database")) database = value;
        else if (!strcmp(name, "--connect-timeout")) connect_timeout = (unsigned int)atoi(value);
        else usage();
    }
    if (!host || !user || !password_file || !database) usage();
    FILE *f = fopen(password_file, "r");
    if (!f) { perror(password_file); return 2; }
    size_t n = fread(password, 1, sizeof password - 1, f);
    fclose(f);
    password[n] = 0;
    if (n && password[n - 1] == '\n') password[n - 1] = 0;

    MYSQL *db = open_connection(password);
    if (mysql_errno(db) == 0) {
        say("TCP %s:%u as %s, libmariadb %s, %s", host, port, user, mysql_get_client_info(),
            mysql_get_host_info(db));
        emit("connect", 1, detail);
        emit("version", check_version(db), detail);
        emit("prepared_utf8mb4", check_prepared(db), detail);
        emit("rollback", check_rollback(db), detail);
    } else {
        say("error %u: %s", mysql_errno(db), mysql_error(db));
        emit("connect", 0, detail);
        char reason[2100];
        snprintf(reason, sizeof reason, "not connected (%s)", detail);
        emit("version", 0, reason);
        emit("prepared_utf8mb4", 0, reason);
        emit("rollback", 0, reason);
    }
    mysql_close(db);
    emit("wrong_password", check_wrong_password(), detail);
    return failures ? 1 : 0;
}
