// ecoready connector smoke program for Go (go-sql-driver/mysql through database/sql).
//
// smoke-go --host H --port P --user U --password-file F --database D [--connect-timeout S]
// [--tls yes] [--sha2-user U2 --sha2-password-file F2]: prints one JSON line per check;
// passwords come from files, never from argv.
// --tls adds the `tls` check (a connection that must be encrypted); --sha2-user the
// `caching_sha2_password` check (that account logs in over TLS twice: full, then fast
// authentication).
// Built by the lab's builder image for every lab arch (CGO_ENABLED=0, GOPATH mode against
// Debian's golang-github-go-sql-driver-mysql-dev), or by a driver row's install in module
// mode against the version it pins.
package main

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// "ecoready <dolphin> <check mark> <u umlaut>": 4-, 3- and 2-byte UTF-8 sequences.
const text = "ecoready \U0001F42C \u2713 \u00fc"
const status = "SHOW SESSION STATUS LIKE 'Com_stmt_prepare'"
const accessDenied = 1045

var failures int

func emit(check string, ok bool, detail string) {
	line, _ := json.Marshal(struct {
		Check  string `json:"check"`
		Ok     bool   `json:"ok"`
		Detail string `json:"detail"`
	}{check, ok, detail})
	os.Stdout.Write(append(line, '\n')) // unbuffered: a killed run keeps what it printed
	if !ok {
		failures++
	}
}

func describe(err error) string {
	var my *mysql.MySQLError
	if errors.As(err, &my) {
		return fmt.Sprintf("error %d: %s", my.Number, my.Message)
	}
	return err.Error()
}

type failed struct{ detail string }

func (f failed) Error() string { return f.detail }

func sqlFailed(statement string, err error) error {
	return failed{statement + ": " + describe(err)}
}

type session struct {
	ctx  context.Context
	conn *sql.Conn // one connection: session counters and transactions need it pinned
}

func (s session) run(statement string, args ...interface{}) error {
	if _, err := s.conn.ExecContext(s.ctx, statement, args...); err != nil {
		return sqlFailed(statement, err)
	}
	return nil
}

func (s session) counter() (int, error) {
	var name, value string
	if err := s.conn.QueryRowContext(s.ctx, status).Scan(&name, &value); err != nil {
		return 0, sqlFailed(status, err)
	}
	return strconv.Atoi(value)
}

func (s session) version() (string, error) {
	var version string
	if err := s.conn.QueryRowContext(s.ctx, "SELECT VERSION()").Scan(&version); err != nil {
		return "", sqlFailed("SELECT VERSION()", err)
	}
	if version == "" {
		return "", failed{"SELECT VERSION() returned no version"}
	}
	return version, nil
}

func (s session) prepared() (string, error) {
	if err := s.run("DROP TABLE IF EXISTS smoke_utf8"); err != nil {
		return "", err
	}
	if err := s.run("CREATE TABLE smoke_utf8 (id INT PRIMARY KEY, txt VARCHAR(64) CHARACTER SET utf8mb4 " +
		"COLLATE utf8mb4_bin NOT NULL) ENGINE=InnoDB"); err != nil {
		return "", err
	}
	before, err := s.counter()
	if err != nil {
		return "", err
	}
	insert := "INSERT INTO smoke_utf8 (id, txt) VALUES (?, ?)"
	stmt, err := s.conn.PrepareContext(s.ctx, insert)
	if err != nil {
		return "", sqlFailed(insert, err)
	}
	_, err = stmt.ExecContext(s.ctx, 1, text)
	stmt.Close()
	if err != nil {
		return "", sqlFailed(insert, err)
	}
	query := "SELECT txt, HEX(txt) FROM smoke_utf8 WHERE id = ?"
	stmt, err = s.conn.PrepareContext(s.ctx, query)
	if err != nil {
		return "", sqlFailed(query, err)
	}
	var got []byte
	var stored string
	err = stmt.QueryRowContext(s.ctx, 1).Scan(&got, &stored)
	stmt.Close()
	if err != nil {
		return "", sqlFailed(query, err)
	}
	after, err := s.counter()
	if err != nil {
		return "", err
	}
	s.run("DROP TABLE smoke_utf8")
	want := strings.ToUpper(hex.EncodeToString([]byte(text)))
	if string(got) != text {
		return "", failed{fmt.Sprintf("read back %X, sent %s (server stored %s)", got, want, stored)}
	}
	if stored != want {
		return "", failed{fmt.Sprintf("the driver round-trips it but the server stored %s, not %s (double encoding?)", stored, want)}
	}
	if after-before < 2 {
		return "", failed{fmt.Sprintf("bytes exact, but the server saw no prepared statement (Com_stmt_prepare +%d)", after-before)}
	}
	return fmt.Sprintf("server-side prepared statements (Com_stmt_prepare +%d): '%s' (%d bytes) round-tripped byte-exact",
		after-before, text, len(text)), nil
}

func (s session) rollback() (string, error) {
	if err := s.run("DROP TABLE IF EXISTS smoke_tx"); err != nil {
		return "", err
	}
	if err := s.run("CREATE TABLE smoke_tx (id INT PRIMARY KEY) ENGINE=InnoDB"); err != nil {
		return "", err
	}
	tx, err := s.conn.BeginTx(s.ctx, nil)
	if err != nil {
		return "", sqlFailed("BEGIN", err)
	}
	if _, err := tx.ExecContext(s.ctx, "INSERT INTO smoke_tx (id) VALUES (1)"); err != nil {
		tx.Rollback()
		return "", sqlFailed("INSERT INTO smoke_tx (id) VALUES (1)", err)
	}
	var inside, after int
	if err := tx.QueryRowContext(s.ctx, "SELECT COUNT(*) FROM smoke_tx").Scan(&inside); err != nil {
		tx.Rollback()
		return "", sqlFailed("SELECT COUNT(*) FROM smoke_tx", err)
	}
	if err := tx.Rollback(); err != nil {
		return "", sqlFailed("ROLLBACK", err)
	}
	if err := s.conn.QueryRowContext(s.ctx, "SELECT COUNT(*) FROM smoke_tx").Scan(&after); err != nil {
		return "", sqlFailed("SELECT COUNT(*) FROM smoke_tx", err)
	}
	s.run("DROP TABLE smoke_tx")
	if inside != 1 || after != 0 {
		return "", failed{fmt.Sprintf("rows inside the transaction %d (want 1), after rollback %d (want 0)", inside, after)}
	}
	return "insert seen inside the transaction, gone after Tx.Rollback()", nil
}

// driverVersion: the module version the program was built with ("Debian's" in GOPATH mode).
func driverVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/go-sql-driver/mysql" {
				return dep.Version
			}
		}
	}
	return "(Debian's)"
}

func readPassword(file string) (string, error) {
	raw, err := os.ReadFile(file)
	return strings.TrimSuffix(string(raw), "\n"), err
}

// cipher: the session's TLS version and cipher, or an error when it is not encrypted.
func cipher(conn *sql.Conn) (string, error) {
	query := "SHOW SESSION STATUS WHERE Variable_name IN ('Ssl_version', 'Ssl_cipher')"
	rows, err := conn.QueryContext(context.Background(), query)
	if err != nil {
		return "", sqlFailed(query, err)
	}
	defer rows.Close()
	found := map[string]string{}
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return "", sqlFailed(query, err)
		}
		found[name] = value
	}
	if found["Ssl_cipher"] == "" {
		return "", failed{"the connection is not encrypted (Ssl_cipher is empty)"}
	}
	return found["Ssl_version"] + " " + found["Ssl_cipher"], nil
}

// encrypted logs in with TLS (the server's certificate is not verified: the lab's servers
// make their own) and returns who it is and the cipher.
func encrypted(host string, port int, user, password, database string, timeout time.Duration) (string, string, error) {
	db, conn, err := openWith(host, port, user, password, database, timeout, "skip-verify")
	if err != nil {
		return "", "", err
	}
	defer db.Close()
	defer conn.Close()
	var me string
	if err := conn.QueryRowContext(context.Background(), "SELECT CURRENT_USER()").Scan(&me); err != nil {
		return "", "", sqlFailed("SELECT CURRENT_USER()", err)
	}
	suite, err := cipher(conn)
	return me, suite, err
}

func open(host string, port int, user, password, database string, timeout time.Duration) (*sql.DB, *sql.Conn, error) {
	return openWith(host, port, user, password, database, timeout, "")
}

func openWith(host string, port int, user, password, database string, timeout time.Duration, tls string) (*sql.DB, *sql.Conn, error) {
	config := mysql.NewConfig()
	config.TLSConfig = tls
	config.Net = "tcp"
	config.Addr = fmt.Sprintf("%s:%d", host, port)
	config.User = user
	config.Passwd = password
	config.DBName = database
	config.Params = map[string]string{"charset": "utf8mb4"}
	config.Timeout = timeout
	config.InterpolateParams = false // the default, said out loud: placeholders go to the server
	db, err := sql.Open("mysql", config.FormatDSN())
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*timeout)
	defer cancel()
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, conn, nil
}

func main() {
	host := flag.String("host", "", "server host")
	port := flag.Int("port", 3306, "server port")
	user := flag.String("user", "", "user")
	passwordFile := flag.String("password-file", "", "file holding the password")
	database := flag.String("database", "", "database")
	connectTimeout := flag.Int("connect-timeout", 5, "connect timeout in seconds")
	tls := flag.String("tls", "no", "yes: check a connection that must be encrypted")
	sha2User := flag.String("sha2-user", "", "a caching_sha2_password account to log in as twice")
	sha2PasswordFile := flag.String("sha2-password-file", "", "file holding that account's password")
	flag.Parse()
	if *host == "" || *user == "" || *passwordFile == "" || *database == "" {
		flag.Usage()
		os.Exit(2)
	}
	password, err := readPassword(*passwordFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	timeout := time.Duration(*connectTimeout) * time.Second

	db, conn, err := open(*host, *port, *user, password, *database, timeout)
	if err != nil {
		reason := describe(err)
		emit("connect", false, reason)
		for _, check := range []string{"version", "prepared_utf8mb4", "rollback"} {
			emit(check, false, "not connected ("+reason+")")
		}
	} else {
		emit("connect", true, fmt.Sprintf("TCP %s:%d as %s, go-sql-driver/mysql %s, %s", *host, *port, *user, driverVersion(), runtime.Version()+" "+runtime.GOARCH))
		s := session{context.Background(), conn}
		for _, c := range []struct {
			name string
			fn   func() (string, error)
		}{{"version", s.version}, {"prepared_utf8mb4", s.prepared}, {"rollback", s.rollback}} {
			detail, err := c.fn()
			if err != nil {
				emit(c.name, false, err.Error())
			} else {
				emit(c.name, true, detail)
			}
		}
		conn.Close()
		db.Close()
	}

	// over TLS when asked: full caching_sha2_password authentication needs it
	wrongTLS := ""
	if *tls == "yes" {
		wrongTLS = "skip-verify"
	}
	wrongDB, wrongConn, err := openWith(*host, *port, *user, password+"-wrong", *database, timeout, wrongTLS)
	if err == nil {
		wrongConn.Close()
		wrongDB.Close()
		emit("wrong_password", false, "a wrong password was accepted")
	} else {
		var my *mysql.MySQLError
		denied := errors.As(err, &my) && my.Number == accessDenied
		if denied {
			emit("wrong_password", true, describe(err))
		} else {
			emit("wrong_password", false, "not 1045 access denied: "+describe(err))
		}
	}
	if *tls == "yes" {
		if _, suite, err := encrypted(*host, *port, *user, password, *database, timeout); err != nil {
			emit("tls", false, "no TLS connection: "+describe(err))
		} else {
			emit("tls", true, "encrypted: "+suite+" (server certificate not verified)")
		}
	}
	if *sha2User != "" {
		emit(sha2Check(*host, *port, *sha2User, *sha2PasswordFile, *database, timeout))
	}
	if failures > 0 {
		os.Exit(1)
	}
}

// sha2Check logs in twice as a caching_sha2_password account over TLS: the first login is
// the full authentication, the second finds the hash in the server's cache (fast).
func sha2Check(host string, port int, user, passwordFile, database string, timeout time.Duration) (string, bool, string) {
	password, err := readPassword(passwordFile)
	if err != nil {
		return "caching_sha2_password", false, err.Error()
	}
	me, suite := "", ""
	for _, attempt := range []string{"full", "fast"} {
		if me, suite, err = encrypted(host, port, user, password, database, timeout); err != nil {
			return "caching_sha2_password", false, attempt + " authentication as " + user + " failed: " + describe(err)
		}
	}
	return "caching_sha2_password", true, me + " logged in twice over " + suite + ": full, then fast authentication"
}
