// Refresher: keeps a local copy of a server's filter current, applying
// change sets (or full fetches) every interval.  Readers get immutable
// snapshots swapped in atomically, so a lookup never sees a half-applied
// refresh; a failed refresh keeps the last good copy and is reported.
//
// The contract: a key committed before the start of the last successful
// refresh is found.  A key committed after it may be answered "absent"
// until the next refresh succeeds: with a healthy connection at most
// Interval + one refresh's duration late.  Status().Age tells how stale
// the copy is (time since the start of the refresh it came from).

package bloomfilter

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// Change is one answer of a Source: the server's bf_index_changes or
// bf_tracked_changes row, or a whole filter from a server without them.
type Change struct {
	NextLSN     string // position to pass next time ("" = none: fetch in full)
	FullRefresh bool   // the patch replaces the local copy
	Patch       []byte // a change set (see DecodePatch)
	Value       []byte // instead of Patch: the filter's bytes (a full fetch)
}

// Source reads the changes of one filter since a position (its previous
// NextLSN; "" for the first call or to ask for everything).
type Source interface {
	Changes(ctx context.Context, since string) (Change, error)
}

// ErrNotReady is returned by lookups before the first successful refresh.
var ErrNotReady = errors.New("bloomfilter: no copy of the filter yet (first refresh has not succeeded)")

// RefresherOptions configure a Refresher.
type RefresherOptions struct {
	Interval time.Duration // between refreshes; default 1 s
	Timeout  time.Duration // of one refresh; default 30 s
	// OnError, if set, is called (from the refreshing goroutine) with
	// every failed refresh's error.
	OnError func(error)
}

type snapshot struct {
	filter *Filter
	lsn    string
	at     time.Time // start of the refresh it came from
}

// Refresher keeps a local copy of one filter current.  Its methods are
// safe for concurrent use.
type Refresher struct {
	src  Source
	opts RefresherOptions
	snap atomic.Pointer[snapshot]

	refreshMu sync.Mutex // one refresh at a time

	mu         sync.Mutex // guards the fields below
	lastErr    error
	lastErrAt  time.Time
	errRun     int
	stats      Stats
	forceFull  bool
	lastChange time.Time
}

// Stats counts a Refresher's work.
type Stats struct {
	Refreshes     uint64 // successful refreshes
	Failures      uint64
	FullFetches   uint64 // refreshes that replaced the whole copy
	Patches       uint64 // refreshes that applied a change set
	BytesReceived uint64 // patch and value bytes
}

// Status describes the copy's freshness and the last error.
type Status struct {
	Ready             bool          // a copy is loaded
	LSN               string        // server position of the copy
	LastSuccess       time.Time     // start of the refresh the copy came from
	Age               time.Duration // time since LastSuccess: the copy's staleness bound
	LastChange        time.Time     // when the copy last changed
	LastError         error         // of the last failed refresh (nil once one succeeds)
	LastErrorAt       time.Time
	ConsecutiveErrors int
	Stats             Stats
}

// NewRefresher returns a Refresher of src.  Call Refresh once to load the
// first copy (or let Run do it), then Run in a goroutine.
func NewRefresher(src Source, opts RefresherOptions) *Refresher {
	if opts.Interval <= 0 {
		opts.Interval = time.Second
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	return &Refresher{src: src, opts: opts}
}

// Filter returns the current copy (a read-only snapshot: keep it as long
// as needed, it never changes), or nil before the first refresh.
func (r *Refresher) Filter() *Filter {
	if s := r.snap.Load(); s != nil {
		return s.filter
	}
	return nil
}

// Contains answers from the current copy (ErrNotReady before the first
// successful refresh).
func (r *Refresher) Contains(v any) (bool, error) {
	f := r.Filter()
	if f == nil {
		return false, ErrNotReady
	}
	return f.Contains(v)
}

// Status returns the copy's age and the last error.
func (r *Refresher) Status() Status {
	r.mu.Lock()
	st := Status{LastError: r.lastErr, LastErrorAt: r.lastErrAt,
		ConsecutiveErrors: r.errRun, Stats: r.stats, LastChange: r.lastChange}
	r.mu.Unlock()
	if s := r.snap.Load(); s != nil {
		st.Ready, st.LSN, st.LastSuccess = true, s.lsn, s.at
		st.Age = time.Since(s.at)
	}
	return st
}

// Run refreshes now and then every Interval until ctx is done; failures
// are recorded (Status, OnError) and do not stop it.  Returns ctx.Err().
func (r *Refresher) Run(ctx context.Context) error {
	t := time.NewTicker(r.opts.Interval)
	defer t.Stop()
	for {
		r.Refresh(ctx)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Refresh brings the copy up to date once.  On error the previous copy
// stays in place.
func (r *Refresher) Refresh(ctx context.Context) error {
	r.refreshMu.Lock()
	defer r.refreshMu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	start := time.Now()
	err := r.refresh(ctx, start)
	r.mu.Lock()
	if err != nil {
		r.lastErr, r.lastErrAt = err, time.Now()
		r.errRun++
		r.stats.Failures++
	} else {
		r.lastErr = nil
		r.errRun = 0
		r.stats.Refreshes++
	}
	r.mu.Unlock()
	if err != nil && r.opts.OnError != nil {
		r.opts.OnError(err)
	}
	return err
}

func (r *Refresher) refresh(ctx context.Context, start time.Time) error {
	cur := r.snap.Load()
	since := ""
	r.mu.Lock()
	full := r.forceFull
	r.mu.Unlock()
	if cur != nil && !full {
		since = cur.lsn
	}
	next, err := r.fetch(ctx, cur, since)
	if err != nil && since != "" && isPatchError(err) {
		// the patch did not apply or the result did not parse: the local
		// copy or the position is unusable, so fetch everything at once
		next, err = r.fetch(ctx, cur, "")
	}
	r.mu.Lock()
	// only a bad patch makes the copy or its position suspect; after a
	// failed round trip (a server or a Citus worker down) patches go on
	r.forceFull = err != nil && isPatchError(err)
	r.mu.Unlock()
	if err != nil {
		return err
	}
	next.at = start
	r.snap.Store(next)
	return nil
}

func isPatchError(err error) bool {
	var pe *PatchError
	var fe *FormatError
	return errors.Is(err, ErrNeedFull) || errors.As(err, &pe) || errors.As(err, &fe)
}

// fetch asks the source for the changes since since and builds the next
// snapshot from cur (nil: none yet).
func (r *Refresher) fetch(ctx context.Context, cur *snapshot, since string) (*snapshot, error) {
	ch, err := r.src.Changes(ctx, since)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.stats.BytesReceived += uint64(len(ch.Patch) + len(ch.Value))
	r.mu.Unlock()
	var base, f *Filter
	if cur != nil && !ch.FullRefresh && since != "" {
		base = cur.filter
	}
	switch {
	case ch.Value != nil:
		f, err = parseOwned(ch.Value)
	case ch.Patch != nil:
		f, err = base.ApplyPatch(ch.Patch)
	default:
		err = errors.New("bloomfilter: the source returned neither a patch nor a value")
	}
	if err != nil {
		return nil, err
	}
	f.readOnly = true
	r.mu.Lock()
	if base == nil || f != base {
		r.lastChange = time.Now()
	}
	if base == nil {
		r.stats.FullFetches++
	} else {
		r.stats.Patches++
	}
	r.mu.Unlock()
	return &snapshot{filter: f, lsn: ch.NextLSN}, nil
}
