// ecoready connector smoke program for C++ (MySQL Connector/C++ 1.1, the JDBC-like API,
// Debian's libmysqlcppconn built on libmariadb).
//
// smoke-cpp --host H --port P --user U --password-file F --database D [--connect-timeout S]
// prints one JSON line per check; the password comes from a file, never from argv.
#include <cppconn/exception.h>
#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>
#include <cppconn/statement.h>
#include <mysql_connection.h>
#include <mysql_driver.h>

#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>

namespace {

// "ecoready <dolphin> <check mark> <u umlaut>": 4-, 3- and 2-byte UTF-8 sequences.
const std::string TEXT = "ecoready \xF0\x9F\x90\xAC \xE2\x9C\x93 \xC3\xBC";
const std::string TEXT_HEX = "65636F726561647920F09F90AC20E29C9320C3BC";
const char STATUS[] = "SHOW SESSION STATUS LIKE 'Com_stmt_prepare'";

std::map<std::string, std::string> args = {{"--port", "3306"}, {"--connect-timeout", "5"}};
int failures = 0;

struct Failed {
    std::string detail;
};

void emit(const std::string &check, bool ok, const std::string &detail) {
    std::ostringstream line;
    line << "{\"check\": \"" << check << "\", \"ok\": " << (ok ? "true" : "false") << ", \"detail\": \"";
    for (unsigned char c : detail) {
        if (c == '"' || c == '\\') line << '\\' << c;
        else if (c < 0x20) line << "\\u00" << "0123456789abcdef"[c >> 4] << "0123456789abcdef"[c & 15];
        else line << c;
    }
    line << "\"}";
    std::cout << line.str() << std::endl;  // endl flushes: a killed run keeps what it printed
    if (!ok) failures++;
}

std::string sql_error(const std::string &statement, const sql::SQLException &e) {
    return statement + ": error " + std::to_string(e.getErrorCode()) + ": " + e.what();
}

sql::Connection *open_connection(const std::string &password) {
    sql::mysql::MySQL_Driver *driver = sql::mysql::get_mysql_driver_instance();
    sql::ConnectOptionsMap options;
    options["hostName"] = sql::SQLString(args["--host"]);
    options["port"] = std::stoi(args["--port"]);
    options["userName"] = sql::SQLString(args["--user"]);
    options["password"] = sql::SQLString(password);
    options["schema"] = sql::SQLString(args["--database"]);
    options["OPT_CONNECT_TIMEOUT"] = std::stoi(args["--connect-timeout"]);
    options["OPT_CHARSET_NAME"] = sql::SQLString("utf8mb4");
    return driver->connect(options);
}

// Run a plain statement; on failure throw Failed naming it.
void run(sql::Connection &db, const std::string &statement) {
    try {
        std::unique_ptr<sql::Statement> stmt(db.createStatement());
        stmt->execute(statement);
    } catch (sql::SQLException &e) {
        throw Failed{sql_error(statement, e)};
    }
}

std::string scalar(sql::Connection &db, const std::string &statement, int column) {
    try {
        std::unique_ptr<sql::Statement> stmt(db.createStatement());
        std::unique_ptr<sql::ResultSet> rs(stmt->executeQuery(statement));
        if (!rs->next()) throw Failed{statement + ": no row"};
        return rs->getString(column);
    } catch (sql::SQLException &e) {
        throw Failed{sql_error(statement, e)};
    }
}

std::string check_version(sql::Connection &db) {
    std::string version = scalar(db, "SELECT VERSION()", 1);
    if (version.empty()) throw Failed{"SELECT VERSION() returned no version"};
    return version;
}

std::string check_prepared(sql::Connection &db) {
    run(db, "DROP TABLE IF EXISTS smoke_utf8");
    run(db,
        "CREATE TABLE smoke_utf8 (id INT PRIMARY KEY, txt VARCHAR(64) CHARACTER SET utf8mb4 "
        "COLLATE utf8mb4_bin NOT NULL) ENGINE=InnoDB");
    long before = std::stol(scalar(db, STATUS, 2));
    const std::string insert = "INSERT INTO smoke_utf8 (id, txt) VALUES (?, ?)";
    try {
        std::unique_ptr<sql::PreparedStatement> stmt(db.prepareStatement(insert));
        stmt->setInt(1, 1);
        stmt->setString(2, TEXT);
        stmt->executeUpdate();
    } catch (sql::SQLException &e) {
        throw Failed{sql_error(insert, e)};
    }
    const std::string select = "SELECT txt, HEX(txt) FROM smoke_utf8 WHERE id = ?";
    std::string got, hex;
    try {
        std::unique_ptr<sql::PreparedStatement> stmt(db.prepareStatement(select));
        stmt->setInt(1, 1);
        std::unique_ptr<sql::ResultSet> rs(stmt->executeQuery());
        if (!rs->next()) throw Failed{select + ": the inserted row is not there"};
        got = rs->getString(1);
        hex = rs->getString(2);
    } catch (sql::SQLException &e) {
        throw Failed{sql_error(select, e)};
    }
    long after = std::stol(scalar(db, STATUS, 2));
    run(db, "DROP TABLE smoke_utf8");
    if (got != TEXT)
        throw Failed{"read back " + std::to_string(got.size()) + " bytes that differ from the " +
                     std::to_string(TEXT.size()) + " sent (server stored " + hex + ", sent " + TEXT_HEX + ")"};
    if (hex != TEXT_HEX)
        throw Failed{"the driver round-trips it but the server stored " + hex + ", not " + TEXT_HEX +
                     " (double encoding?)"};
    if (after - before < 2)
        throw Failed{"bytes exact, but the server saw no prepared statement (Com_stmt_prepare +" +
                     std::to_string(after - before) + ")"};
    return "server-side prepared statements (Com_stmt_prepare +" + std::to_string(after - before) + "): '" + TEXT +
           "' (" + std::to_string(TEXT.size()) + " bytes) round-tripped byte-exact";
}

std::string check_rollback(sql::Connection &db) {
    run(db, "DROP TABLE IF EXISTS smoke_tx");
    run(db, "CREATE TABLE smoke_tx (id INT PRIMARY KEY) ENGINE=InnoDB");
    std::string inside, after;
    try {
        db.setAutoCommit(false);
        run(db, "INSERT INTO smoke_tx (id) VALUES (1)");
        inside = scalar(db, "SELECT COUNT(*) FROM smoke_tx", 1);
        db.rollback();
        after = scalar(db, "SELECT COUNT(*) FROM smoke_tx", 1);
        db.setAutoCommit(true);
    } catch (sql::SQLException &e) {
        throw Failed{sql_error("setAutoCommit/rollback", e)};
    }
    run(db, "DROP TABLE smoke_tx");
    if (inside != "1" || after != "0")
        throw Failed{"rows inside the transaction " + inside + " (want 1), after rollback " + after + " (want 0)"};
    return "insert seen inside the transaction, gone after Connection::rollback()";
}

void check(const std::string &name, sql::Connection &db, std::string (*fn)(sql::Connection &)) {
    try {
        emit(name, true, fn(db));
    } catch (Failed &f) {
        emit(name, false, f.detail);
    } catch (std::exception &e) {
        emit(name, false, std::string("unexpected exception: ") + e.what());
    }
}

}  // namespace

int main(int argc, char **argv) {
    for (int i = 1; i + 1 < argc; i += 2) args[argv[i]] = argv[i + 1];
    for (const char *key : {"--host", "--user", "--password-file", "--database"}) {
        if (!args.count(key) || argc % 2 == 0) {
            std::cerr << "usage: smoke-cpp --host H --port P --user U --password-file F --database D "
                         "[--connect-timeout S]\n";
            return 2;
        }
    }
    std::ifstream file(args["--password-file"]);
    if (!file) {
        std::cerr << "cannot read " << args["--password-file"] << "\n";
        return 2;
    }
    std::string password((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    if (!password.empty() && password.back() == '\n') password.pop_back();

    std::unique_ptr<sql::Connection> db;
    try {
        db.reset(open_connection(password));
        sql::mysql::MySQL_Driver *driver = sql::mysql::get_mysql_driver_instance();
        emit("connect", true,
             "TCP " + args["--host"] + ":" + args["--port"] + " as " + args["--user"] + ", Connector/C++ " +
                 std::to_string(driver->getMajorVersion()) + "." + std::to_string(driver->getMinorVersion()) + "." +
                 std::to_string(driver->getPatchVersion()));
    } catch (sql::SQLException &e) {
        std::string reason = "error " + std::to_string(e.getErrorCode()) + ": " + e.what();
        emit("connect", false, reason);
        for (const char *name : {"version", "prepared_utf8mb4", "rollback"})
            emit(name, false, "not connected (" + reason + ")");
    }
    if (db) {
        check("version", *db, check_version);
        check("prepared_utf8mb4", *db, check_prepared);
        check("rollback", *db, check_rollback);
        db->close();
    }
    try {
        std::unique_ptr<sql::Connection> wrong(open_connection(password + "-wrong"));
        emit("wrong_password", false, "a wrong password was accepted");
    } catch (sql::SQLException &e) {
        bool denied = e.getErrorCode() == 1045;  // ER_ACCESS_DENIED_ERROR
        emit("wrong_password", denied,
             "error " + std::to_string(e.getErrorCode()) + (denied ? " (access denied): " : ", not 1045 access denied: ") +
                 e.what());
    }
    return failures ? 1 : 0;
}
