// ecoready connector smoke program for Java: any JDBC driver on the class path (Debian's
// MariaDB Connector/J, or one from Maven Central: MySQL Connector/J, MariaDB Connector/J).
//
// smoke-java --host H --port P --user U --password-file F --database D [--connect-timeout S]
//            [--scheme mariadb|mysql] [--tls yes] [--sha2-user U2 --sha2-password-file F2]
// prints one JSON line per check; passwords come from files, never from argv.
// --scheme picks the JDBC URL (jdbc:mariadb: by default); --tls adds the `tls` check (a
// connection that must be encrypted); --sha2-user the `caching_sha2_password` check (that
// account logs in over TLS twice: full, then fast authentication).
// Compiled once by the lab's builder image: bytecode runs on every arch.

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;

public final class EcoreadySmoke {
    // "ecoready <dolphin> <check mark> <u umlaut>": 4-, 3- and 2-byte UTF-8 sequences.
    static final String TEXT = "ecoready \uD83D\uDC2C \u2713 \u00FC";
    static final String TEXT_HEX = "65636F726561647920F09F90AC20E29C9320C3BC";
    static final String STATUS = "SHOW SESSION STATUS LIKE 'Com_stmt_prepare'";
    static final int ACCESS_DENIED = 1045;
    static int failures = 0;

    static final class Failed extends Exception {
        Failed(String detail) {
            super(detail);
        }
    }

    interface Check {
        String run(Connection db) throws Failed, SQLException;
    }

    static void emit(String check, boolean ok, String detail) {
        StringBuilder line = new StringBuilder("{\"check\": \"").append(check).append("\", \"ok\": ")
            .append(ok).append(", \"detail\": \"");
        for (char c : detail.toCharArray()) {
            if (c == '"' || c == '\\') line.append('\\').append(c);
            else if (c < 0x20) line.append(String.format("\\u%04x", (int) c));
            else line.append(c);
        }
        System.out.println(line.append("\"}"));
        System.out.flush(); // a killed run keeps what it printed
        if (!ok) failures++;
    }

    static String describe(SQLException e) {
        String message = String.valueOf(e.getMessage());
        int newline = message.indexOf('\n'); // Connector/J appends charset advice on a second line
        return "error " + e.getErrorCode() + ": " + (newline < 0 ? message : message.substring(0, newline));
    }

    static Connection open(Map<String, String> args, String password) throws SQLException {
        return open(args, args.get("--user"), password, false);
    }

    // `tls`: the connection must be encrypted; the server's certificate is not verified (the
    // lab's servers make their own).
    static Connection open(Map<String, String> args, String user, String password, boolean tls) throws SQLException {
        String scheme = args.get("--scheme");
        // useServerPrepStmts: both Connector/Js prepare on the client unless asked.
        String url = "jdbc:" + scheme + "://" + args.get("--host") + ":" + args.get("--port") + "/"
            + args.get("--database") + "?useServerPrepStmts=true&connectTimeout="
            + Integer.parseInt(args.get("--connect-timeout")) * 1000;
        if (tls) url += "mysql".equals(scheme) ? "&sslMode=REQUIRED" : "&sslMode=trust";
        Properties props = new Properties();
        props.setProperty("user", user);
        props.setProperty("password", password);
        return DriverManager.getConnection(url, props);
    }

    static String cipher(Connection db) throws Failed {
        String version = "?";
        String cipher = "";
        String query = "SHOW SESSION STATUS WHERE Variable_name IN ('Ssl_version', 'Ssl_cipher')";
        try (Statement stmt = db.createStatement(); ResultSet rs = stmt.executeQuery(query)) {
            while (rs.next()) {
                if ("Ssl_version".equals(rs.getString(1))) version = rs.getString(2);
                else cipher = rs.getString(2);
            }
        } catch (SQLException e) {
            throw new Failed(query + ": " + describe(e));
        }
        if (cipher == null || cipher.isEmpty()) throw new Failed("the connection is not encrypted (Ssl_cipher is empty)");
        return version + " " + cipher;
    }

    static String tls(Map<String, String> args, String password) throws Failed {
        try (Connection db = open(args, args.get("--user"), password, true)) {
            return "encrypted: " + cipher(db) + " (server certificate not verified)";
        } catch (SQLException e) {
            throw new Failed("no TLS connection: " + describe(e));
        }
    }

    // Log in twice as a caching_sha2_password account over TLS: the first login is the full
    // authentication, the second finds the hash in the server's cache (fast).
    static String sha2(Map<String, String> args, String user, String password) throws Failed {
        String me = "";
        String encrypted = "";
        for (String attempt : new String[] {"full", "fast"}) {
            try (Connection db = open(args, user, password, true)) {
                me = scalar(db, "SELECT CURRENT_USER()", 1);
                encrypted = cipher(db);
            } catch (SQLException e) {
                throw new Failed(attempt + " authentication as " + user + " failed: " + describe(e));
            }
        }
        return me + " logged in twice over " + encrypted + ": full, then fast authentication";
    }

    static String readPassword(String file) throws java.io.IOException {
        String password = new String(Files.readAllBytes(Paths.get(file)), StandardCharsets.UTF_8);
        return password.endsWith("\n") ? password.substring(0, password.length() - 1) : password;
    }

    static void run(Connection db, String statement) throws Failed {
        try (Statement stmt = db.createStatement()) {
            stmt.execute(statement);
        } catch (SQLException e) {
            throw new Failed(statement + ": " + describe(e));
        }
    }

    static String scalar(Connection db, String statement, int column) throws Failed {
        try (Statement stmt = db.createStatement(); ResultSet rs = stmt.executeQuery(statement)) {
            if (!rs.next()) throw new Failed(statement + ": no row");
            return rs.getString(column);
        } catch (SQLException e) {
            throw new Failed(statement + ": " + describe(e));
        }
    }

    static String version(Connection db) throws Failed {
        String version = scalar(db, "SELECT VERSION()", 1);
        if (version == null || version.isEmpty()) throw new Failed("SELECT VERSION() returned no version");
        return version;
    }

    static String prepared(Connection db) throws Failed {
        run(db, "DROP TABLE IF EXISTS smoke_utf8");
        run(db, "CREATE TABLE smoke_utf8 (id INT PRIMARY KEY, txt VARCHAR(64) CHARACTER SET utf8mb4 "
            + "COLLATE utf8mb4_bin NOT NULL) ENGINE=InnoDB");
        long before = Long.parseLong(scalar(db, STATUS, 2));
        String insert = "INSERT INTO smoke_utf8 (id, txt) VALUES (?, ?)";
        try (PreparedStatement stmt = db.prepareStatement(insert)) {
            stmt.setInt(1, 1);
            stmt.setString(2, TEXT);
            stmt.executeUpdate();
        } catch (SQLException e) {
            throw new Failed(insert + ": " + describe(e));
        }
        String select = "SELECT txt, HEX(txt) FROM smoke_utf8 WHERE id = ?";
        byte[] got;
        String stored;
        try (PreparedStatement stmt = db.prepareStatement(select)) {
            stmt.setInt(1, 1);
            try (ResultSet rs = stmt.executeQuery()) {
                if (!rs.next()) throw new Failed(select + ": the inserted row is not there");
                got = rs.getString(1).getBytes(StandardCharsets.UTF_8);
                stored = rs.getString(2);
            }
        } catch (SQLException e) {
            throw new Failed(select + ": " + describe(e));
        }
        long after = Long.parseLong(scalar(db, STATUS, 2));
        run(db, "DROP TABLE smoke_utf8");
        byte[] sent = TEXT.getBytes(StandardCharsets.UTF_8);
        if (!Arrays.equals(got, sent)) {
            StringBuilder hex = new StringBuilder();
            for (byte b : got) hex.append(String.format("%02X", b));
            throw new Failed("read back " + hex + ", sent " + TEXT_HEX + " (server stored " + stored + ")");
        }
        if (!TEXT_HEX.equals(stored))
            throw new Failed("the driver round-trips it but the server stored " + stored + ", not " + TEXT_HEX
                + " (double encoding?)");
        if (after - before < 2)
            throw new Failed("bytes exact, but the server saw no prepared statement (Com_stmt_prepare +"
                + (after - before) + ")");
        return "server-side prepared statements (useServerPrepStmts=true, Com_stmt_prepare +" + (after - before)
            + "): '" + TEXT + "' (" + sent.length + " bytes) round-tripped byte-exact";
    }

    static String rollback(Connection db) throws Failed, SQLException {
        run(db, "DROP TABLE IF EXISTS smoke_tx");
        run(db, "CREATE TABLE smoke_tx (id INT PRIMARY KEY) ENGINE=InnoDB");
        db.setAutoCommit(false);
        run(db, "INSERT INTO smoke_tx (id) VALUES (1)");
        String inside = scalar(db, "SELECT COUNT(*) FROM smoke_tx", 1);
        db.rollback();
        String after = scalar(db, "SELECT COUNT(*) FROM smoke_tx", 1);
        db.setAutoCommit(true);
        run(db, "DROP TABLE smoke_tx");
        if (!"1".equals(inside) || !"0".equals(after))
            throw new Failed("rows inside the transaction " + inside + " (want 1), after rollback " + after
                + " (want 0)");
        return "insert seen inside the transaction, gone after Connection.rollback()";
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> args = new HashMap<>();
        args.put("--port", "3306");
        args.put("--connect-timeout", "5");
        args.put("--scheme", "mariadb");
        for (int i = 0; i + 1 < argv.length; i += 2) args.put(argv[i], argv[i + 1]);
        for (String key : new String[] {"--host", "--user", "--password-file", "--database"}) {
            if (!args.containsKey(key) || argv.length % 2 != 0) {
                System.err.println("usage: smoke-java --host H --port P --user U --password-file F --database D "
                    + "[--connect-timeout S] [--scheme mariadb|mysql] [--tls yes] [--sha2-user U2 --sha2-password-file F2]");
                System.exit(2);
            }
        }
        String password = readPassword(args.get("--password-file"));

        Connection db = null;
        try {
            db = open(args, password);
            emit("connect", true, "TCP " + args.get("--host") + ":" + args.get("--port") + " as " + args.get("--user")
                + ", " + db.getMetaData().getDriverName() + " " + db.getMetaData().getDriverVersion() + ", Java "
                + System.getProperty("java.version") + " " + System.getProperty("os.arch"));
        } catch (SQLException e) {
            emit("connect", false, describe(e));
            for (String check : new String[] {"version", "prepared_utf8mb4", "rollback"})
                emit(check, false, "not connected (" + describe(e) + ")");
        }
        if (db != null) {
            String[] names = {"version", "prepared_utf8mb4", "rollback"};
            Check[] checks = {EcoreadySmoke::version, EcoreadySmoke::prepared, EcoreadySmoke::rollback};
            for (int i = 0; i < names.length; i++) {
                try {
                    emit(names[i], true, checks[i].run(db));
                } catch (Failed e) {
                    emit(names[i], false, e.getMessage());
                } catch (SQLException e) {
                    emit(names[i], false, describe(e));
                } catch (RuntimeException e) {
                    emit(names[i], false, "unexpected " + e);
                }
            }
            db.close();
        }
        // over TLS when asked: full caching_sha2_password authentication needs it
        try (Connection wrong = open(args, args.get("--user"), password + "-wrong", "yes".equals(args.get("--tls")))) {
            emit("wrong_password", false, "a wrong password was accepted");
        } catch (SQLException e) {
            boolean denied = e.getErrorCode() == ACCESS_DENIED;
            emit("wrong_password", denied, denied ? describe(e) : "not 1045 access denied: " + describe(e));
        }
        if ("yes".equals(args.get("--tls"))) {
            try {
                emit("tls", true, tls(args, password));
            } catch (Failed e) {
                emit("tls", false, e.getMessage());
            } catch (RuntimeException e) {
                emit("tls", false, "unexpected " + e);
            }
        }
        if (args.containsKey("--sha2-user")) {
            try {
                emit("caching_sha2_password", true,
                    sha2(args, args.get("--sha2-user"), readPassword(args.get("--sha2-password-file"))));
            } catch (Failed e) {
                emit("caching_sha2_password", false, e.getMessage());
            } catch (RuntimeException e) {
                emit("caching_sha2_password", false, "unexpected " + e);
            }
        }
        System.exit(failures > 0 ? 1 : 0);
    }
}
