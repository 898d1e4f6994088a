module github.com/go-sql-driver/mysql

go 1.21.0

require filippo.io/edwards25519 v1.1.0
