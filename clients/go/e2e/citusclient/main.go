// citusclient: a Refresher of one tracked column driven over stdin, for
// test/lib/citus_clients.sh (the clients against a table distributed by
// Citus, test/suites/92-citus.sh).  One process keeps one Refresher, so
// the refreshes after the first are incremental as an application's are.
//
//	citusclient -conn 'host=... port=... user=... dbname=...' -table T -column C
//
// Commands, one a line on stdin; one answer a line on stdout:
//
//	check KEYFILE   refresh, then test every key of KEYFILE (one a line;
//	                parsed as an integer for a filter of integers, else
//	                text); answers
//	                  ok MODE NKEYS BYTES MD5 LAYOUT LSN
//	                MODE full or patch (how the refresh reached the copy),
//	                BYTES received by it, MD5 of the copy's bytes, LAYOUT
//	                blocked, growing or union, LSN the position it got; or
//	                  fail REASON
//	quit            (or end of input) exit
//
// In the e2e module (built by test/suites/71-client-go.sh with Debian's
// lib/pq in GOPATH mode, clients/go/scripts/gopath.sh).
package main

import (
	"bufio"
	"context"
	"crypto/md5"
	"database/sql"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	bloomfilter "github.com/bloomfilter-pg/bloomfilter/clients/go"
	_ "github.com/lib/pq"
)

func main() {
	conninfo := flag.String("conn", "", "libpq connection string (default: the PG* environment)")
	table := flag.String("table", "", "the tracked table")
	column := flag.String("column", "", "its tracked column")
	flag.Parse()
	if *table == "" || *column == "" {
		fmt.Fprintln(os.Stderr, "usage: citusclient [-conn CONNINFO] -table T -column C")
		os.Exit(2)
	}
	// lib/pq panics on PGSYSCONFDIR (pg_virtualenv sets it); not needed here
	os.Unsetenv("PGSYSCONFDIR")
	db, err := sql.Open("postgres", *conninfo)
	if err != nil {
		fmt.Fprintln(os.Stderr, "citusclient:", err)
		os.Exit(1)
	}
	defer db.Close()
	ref := bloomfilter.NewRefresher(bloomfilter.NewTrackedSource(db, *table, *column),
		bloomfilter.RefresherOptions{Timeout: 120 * time.Second})

	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		cmd, arg, _ := strings.Cut(in.Text(), " ")
		switch cmd {
		case "check":
			fmt.Fprintln(out, check(ref, arg))
		case "quit":
			out.Flush()
			return
		case "":
			continue
		default:
			fmt.Fprintf(out, "fail unknown command %q\n", cmd)
		}
		out.Flush()
	}
}

func check(ref *bloomfilter.Refresher, keyfile string) string {
	before := ref.Status().Stats
	if err := ref.Refresh(context.Background()); err != nil {
		return "fail refresh: " + oneLine(err.Error())
	}
	st := ref.Status()
	mode := "patch"
	switch {
	case st.Stats.FullFetches > before.FullFetches:
		mode = "full"
	case st.Stats.Patches == before.Patches:
		return "fail refresh counted neither a full fetch nor a patch"
	}
	f := ref.Filter()
	file, err := os.Open(keyfile)
	if err != nil {
		return "fail " + oneLine(err.Error())
	}
	defer file.Close()
	keys := bufio.NewScanner(file)
	keys.Buffer(make([]byte, 1<<16), 1<<24)
	n := 0
	for keys.Scan() {
		key := keys.Text()
		var v any = key
		if f.Family() == bloomfilter.FamilyInteger {
			i, err := strconv.ParseInt(key, 10, 64)
			if err != nil {
				return fmt.Sprintf("fail key %q is not an integer (the filter's family)", key)
			}
			v = i
		}
		ok, err := f.Contains(v)
		if err != nil {
			return fmt.Sprintf("fail key %q: %s", key, oneLine(err.Error()))
		}
		if !ok {
			return fmt.Sprintf("fail key %q reported absent (%d keys tested before it)", key, n)
		}
		n++
	}
	if err := keys.Err(); err != nil {
		return "fail " + oneLine(err.Error())
	}
	layout := "blocked"
	if f.IsUnion() {
		layout = "union"
	} else if f.IsGrowing() {
		layout = "growing"
	}
	sum := md5.Sum(f.Bytes())
	lsn := st.LSN
	if lsn == "" {
		lsn = "-"
	}
	return fmt.Sprintf("ok %s %d %d %s %s %s", mode, n,
		st.Stats.BytesReceived-before.BytesReceived, hex.EncodeToString(sum[:]), layout, lsn)
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }
