// The end-to-end tests of the Go client against a server, in a module of
// their own so that the client's go.mod stays free of dependencies.  They
// use Debian's lib/pq and pgx v4 sources and build in GOPATH mode
// (GO111MODULE=off, GOPATH including /usr/share/gocode), as
// test/suites/71-client-go.sh does; this file only keeps them out of the
// client module's ./... .
module github.com/bloomfilter-pg/bloomfilter/clients/go/e2e

go 1.19
