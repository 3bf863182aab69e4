// Sources reading a filter through database/sql (any driver: lib/pq,
// pgx's stdlib): the filter of a tracked column or of a bloomfilter index.
// They use bf_tracked_changes / bf_index_changes when the server has them
// (incremental refresh) and otherwise fetch the whole filter each time.

package bloomfilter

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
)

// Querier is what a source needs of *sql.DB, *sql.Conn or *sql.Tx.
type Querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// NewTrackedSource reads the filter of a column tracked with bf_track:
// bf_tracked_filter(table, column).  table is a regclass text such as
// "public.items" (resolved by the server with the session's search_path).
func NewTrackedSource(db Querier, table, column string) Source {
	return &sqlSource{db: db, fn: "bf_tracked", sig: "regclass,name",
		args: []any{table, column}, cast: "$1::pg_catalog.regclass, $2::pg_catalog.name"}
}

// NewIndexSource reads the filter of a bloomfilter index: bf_index_filter(index).
func NewIndexSource(db Querier, index string) Source {
	return &sqlSource{db: db, fn: "bf_index", sig: "regclass",
		args: []any{index}, cast: "$1::pg_catalog.regclass"}
}

type sqlSource struct {
	db   Querier
	fn   string // "bf_tracked" or "bf_index"
	sig  string // argument types of <fn>_filter
	args []any
	cast string // the arguments in SQL

	mu         sync.Mutex
	changesSQL string // the query of <fn>_changes, once known to exist
	filterSQL  string
}

// discover finds the extension's schema (every name is qualified, so a
// hostile search_path cannot substitute functions) and whether the server
// has the change-set function.
func (s *sqlSource) discover(ctx context.Context) (changes, filter string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changesSQL != "" || s.filterSQL != "" {
		return s.changesSQL, s.filterSQL, nil
	}
	var schema string
	var hasChanges bool
	err = s.db.QueryRowContext(ctx, `
		SELECT pg_catalog.quote_ident(n.nspname),
		       pg_catalog.to_regprocedure(pg_catalog.quote_ident(n.nspname) ||
		           '.`+s.fn+`_changes(`+s.sig+`,pg_lsn)') IS NOT NULL
		  FROM pg_catalog.pg_extension e
		  JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
		 WHERE e.extname = 'bloomfilter'`).Scan(&schema, &hasChanges)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", errors.New("bloomfilter: the extension bloomfilter is not installed in this database")
	}
	if err != nil {
		return "", "", err
	}
	n := len(s.args) + 1
	if hasChanges {
		s.changesSQL = fmt.Sprintf(`SELECT next_lsn::pg_catalog.text, full_refresh, patch
			FROM %s.%s_changes(%s, $%d::pg_catalog.pg_lsn)`, schema, s.fn, s.cast, n)
	} else {
		s.filterSQL = fmt.Sprintf(`SELECT %s.%s_filter(%s)::pg_catalog.bytea`, schema, s.fn, s.cast)
	}
	return s.changesSQL, s.filterSQL, nil
}

func (s *sqlSource) Changes(ctx context.Context, since string) (Change, error) {
	changesSQL, filterSQL, err := s.discover(ctx)
	if err != nil {
		return Change{}, err
	}
	var ch Change
	if changesSQL != "" {
		var sinceArg any
		if since != "" {
			sinceArg = since
		}
		var next sql.NullString
		err = s.db.QueryRowContext(ctx, changesSQL, append(s.args[:len(s.args):len(s.args)], sinceArg)...).
			Scan(&next, &ch.FullRefresh, &ch.Patch)
		ch.NextLSN = next.String
	} else {
		err = s.db.QueryRowContext(ctx, filterSQL, s.args...).Scan(&ch.Value)
		ch.FullRefresh = true
		// ask again next time: the server may gain the function by an
		// ALTER EXTENSION UPDATE
		s.mu.Lock()
		s.filterSQL = ""
		s.mu.Unlock()
	}
	if err != nil {
		// look the functions up again: the extension may have changed
		s.mu.Lock()
		s.changesSQL, s.filterSQL = "", ""
		s.mu.Unlock()
		return Change{}, err
	}
	if ch.Patch == nil && ch.Value == nil {
		return Change{}, errors.New("bloomfilter: the server returned no filter (NULL)")
	}
	return ch, nil
}
