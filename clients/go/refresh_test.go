package bloomfilter

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeSource plays the server: a filter that changes, a WAL position per
// version, and change sets computed as the differing byte ranges.
type fakeSource struct {
	mu       sync.Mutex
	filter   *Filter
	lsn      int
	history  map[int][]byte // bytes of each version
	failNext int            // calls that fail as a lost connection would
	corrupt  bool           // next patch has a bad run
	calls    []string       // since of each call
	asValue  bool           // answer with whole values (no change-set function)
}

func newFakeSource(t *testing.T) *fakeSource {
	f, _ := New(64, 7, 11)
	f.Add(int64(-1))
	s := &fakeSource{filter: f, history: map[int][]byte{}}
	s.commit()
	return s
}

func (s *fakeSource) commit() {
	s.lsn++
	s.history[s.lsn] = s.filter.Bytes()
}

func (s *fakeSource) add(keys ...int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		s.filter.Add(k)
	}
	s.commit()
}

func (s *fakeSource) Changes(ctx context.Context, since string) (Change, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, since)
	if err := ctx.Err(); err != nil {
		return Change{}, err
	}
	if s.failNext > 0 {
		s.failNext--
		return Change{}, errors.New("connection refused")
	}
	cur := s.filter.Bytes()
	next := fmt.Sprint(s.lsn)
	if s.asValue {
		return Change{Value: cur, FullRefresh: true}, nil
	}
	n, _ := strconv.Atoi(since)
	old, ok := s.history[n]
	if !ok || len(old) != len(cur) {
		return Change{NextLSN: next, FullRefresh: true, Patch: makePatch(true, uint64(len(cur)), run{0, cur})}, nil
	}
	var runs []run
	for i := 0; i < len(cur); i += 64 { // whole 64-byte "pages"
		if string(old[i:i+64]) != string(cur[i:i+64]) {
			if len(runs) > 0 && runs[len(runs)-1].off+uint64(len(runs[len(runs)-1].data)) == uint64(i) {
				runs[len(runs)-1].data = cur[runs[len(runs)-1].off : i+64]
			} else {
				runs = append(runs, run{uint64(i), cur[i : i+64]})
			}
		}
	}
	if s.corrupt && len(runs) > 0 {
		s.corrupt = false
		runs = append(runs, run{0, []byte{1}}) // out of order
	}
	return Change{NextLSN: next, Patch: makePatch(false, uint64(len(cur)), runs...)}, nil
}

func TestRefresherBasics(t *testing.T) {
	src := newFakeSource(t)
	r := NewRefresher(src, RefresherOptions{})
	ctx := context.Background()
	if _, err := r.Contains(int64(1)); !errors.Is(err, ErrNotReady) {
		t.Fatalf("before the first refresh: %v", err)
	}
	if st := r.Status(); st.Ready {
		t.Fatal("ready before the first refresh")
	}
	if err := r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, _ := r.Contains(int64(-1)); !ok {
		t.Fatal("first copy lacks a key")
	}
	first := r.Filter()
	if _, err := first.Add(int64(5)); !errors.Is(err, ErrReadOnly) {
		t.Errorf("snapshot is writable: %v", err)
	}
	src.add(1, 2, 3)
	if ok, _ := r.Contains(int64(2)); ok {
		t.Log("(false positive before refresh)")
	}
	if err := r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	for _, k := range []int64{-1, 1, 2, 3} {
		if ok, _ := r.Contains(k); !ok {
			t.Errorf("key %d missing after refresh", k)
		}
	}
	st := r.Status()
	if st.Stats.FullFetches != 1 || st.Stats.Patches != 1 || st.LSN != "2" || st.LastError != nil {
		t.Errorf("status %+v", st)
	}
	if src.calls[0] != "" || src.calls[1] != "1" {
		t.Errorf("since values %q", src.calls)
	}
	// the first snapshot is untouched
	if ok, _ := first.Contains(int64(2)); ok && first == r.Filter() {
		t.Error("the old snapshot was modified in place")
	}
	// nothing changed: same snapshot, new position
	if err := r.Refresh(ctx); err != nil || r.Filter() == nil {
		t.Fatal(err)
	}
	if r.Status().Stats.BytesReceived == 0 {
		t.Error("bytes not counted")
	}
}

func TestRefresherSurvivesErrors(t *testing.T) {
	src := newFakeSource(t)
	var reported atomic.Int32
	r := NewRefresher(src, RefresherOptions{OnError: func(error) { reported.Add(1) }})
	ctx := context.Background()
	if err := r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	before := r.Status().LastSuccess
	src.add(10)
	src.failNext = 2
	for i := 0; i < 2; i++ {
		if err := r.Refresh(ctx); err == nil {
			t.Fatal("error not returned")
		}
	}
	st := r.Status()
	if st.LastError == nil || st.ConsecutiveErrors != 2 || st.LastSuccess != before || !st.Ready ||
		st.Age < time.Since(before)-time.Second || reported.Load() != 2 {
		t.Errorf("status after errors %+v", st)
	}
	if ok, err := r.Contains(int64(-1)); !ok || err != nil {
		t.Error("the last good copy no longer answers")
	}
	if err := r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if st := r.Status(); st.LastError != nil || st.ConsecutiveErrors != 0 || !st.LastSuccess.After(before) {
		t.Errorf("status after recovery %+v", st)
	}
	if ok, _ := r.Contains(int64(10)); !ok {
		t.Error("key added during the outage missing")
	}
}

func TestRefresherFallsBackToFull(t *testing.T) {
	src := newFakeSource(t)
	r := NewRefresher(src, RefresherOptions{})
	ctx := context.Background()
	r.Refresh(ctx)
	src.add(20)
	src.corrupt = true
	if err := r.Refresh(ctx); err != nil {
		t.Fatalf("refresh after a bad patch: %v", err)
	}
	if got := src.calls[len(src.calls)-1]; got != "" {
		t.Errorf("after a bad patch the retry asked since %q, want a full fetch", got)
	}
	if ok, _ := r.Contains(int64(20)); !ok {
		t.Error("key missing after the full fetch")
	}
	// the filter was rebuilt with another size: a full refresh
	src.mu.Lock()
	src.filter, _ = New(128, 7, 11)
	src.filter.Add(int64(30))
	src.commit()
	src.mu.Unlock()
	if err := r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, _ := r.Contains(int64(30)); !ok || r.Filter().NBits() != 128*512 {
		t.Error("rebuilt filter not loaded")
	}
	// a source without change sets
	src.asValue = true
	src.add(40)
	if err := r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, _ := r.Contains(int64(40)); !ok {
		t.Error("whole-value fetch not loaded")
	}
}

// TestRefresherAtomic runs the refresher while readers check that every
// snapshot they see holds all of each batch of keys or none of the last:
// a half-applied refresh would lose part of a batch.
func TestRefresherAtomic(t *testing.T) {
	src := newFakeSource(t)
	r := NewRefresher(src, RefresherOptions{Interval: time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	go r.Run(ctx)
	const batches, size = 20, 50
	var wg sync.WaitGroup
	var bad atomic.Int32
	var checks atomic.Int64
	stop := make(chan struct{})
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				f := r.Filter()
				// the batches this snapshot holds are a prefix
				seen := 0
				for b := 0; b < batches; b++ {
					if ok, _ := f.Contains(int64(b*1000 + size - 1)); ok {
						seen = b + 1
					}
				}
				for b := 0; b < seen; b++ {
					for i := 0; i < size; i++ {
						if ok, _ := f.Contains(int64(b*1000 + i)); !ok {
							bad.Add(1)
						}
					}
				}
				checks.Add(1)
				time.Sleep(50 * time.Microsecond) // leave the CPU to the writer
			}
		}()
	}
	for b := 0; b < batches; b++ {
		keys := make([]int64, size)
		for i := range keys {
			keys[i] = int64(b*1000 + i)
		}
		src.add(keys...)
		time.Sleep(2 * time.Millisecond)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if ok, _ := r.Contains(int64((batches-1)*1000 + size - 1)); ok {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if bad.Load() != 0 {
		t.Errorf("%d keys missing from snapshots that hold later keys of their batch", bad.Load())
	}
	for b := 0; b < batches; b++ {
		for i := 0; i < size; i++ {
			if ok, _ := r.Contains(int64(b*1000 + i)); !ok {
				t.Fatalf("key %d missing at the end", b*1000+i)
			}
		}
	}
	t.Logf("%d snapshot checks, %d refreshes", checks.Load(), r.Status().Stats.Refreshes)
}
