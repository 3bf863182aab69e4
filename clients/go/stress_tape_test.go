package bloomfilter

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"testing"
)

// A tape of test/stress.py: every change set its reader got from
// bf_tracked_changes while writers and online rebuilds ran, and at the end
// each table's keys and bf_tracked_filter.
type stressTape struct {
	Seed    int64 `json:"seed"`
	Filters map[string]struct {
		Changes []struct {
			Since *string `json:"since"`
			Next  string  `json:"next"`
			Full  bool    `json:"full"`
			Patch string  `json:"patch"`
		} `json:"changes"`
		Whole string   `json:"whole"`
		Keys  []string `json:"keys"`
	} `json:"filters"`
}

// tapeSource answers a Refresher with the recorded change sets, in order,
// checking that it asks from where the recorded reader asked.
type tapeSource struct {
	changes []Change
	since   []string
	next    int
}

func (s *tapeSource) Changes(_ context.Context, since string) (Change, error) {
	i := s.next
	if i >= len(s.changes) {
		return Change{}, fmt.Errorf("tape ended")
	}
	if since != s.since[i] {
		return Change{}, fmt.Errorf("change set %d: asked since %q, the recorded reader asked since %q", i, since, s.since[i])
	}
	s.next++
	return s.changes[i], nil
}

// TestStressTape replays a tape (BF_STRESS_TAPE; test/stress_replay.sh sets
// it) through a Refresher and looks every key up in the copy: after
// concurrent writers and online rebuilds, none may be missing.
func TestStressTape(t *testing.T) {
	path := os.Getenv("BF_STRESS_TAPE")
	if path == "" {
		t.Skip("BF_STRESS_TAPE is not set (test/stress_replay.sh sets it)")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var tape stressTape
	if err := json.Unmarshal(data, &tape); err != nil {
		t.Fatal(err)
	}
	for name, f := range tape.Filters {
		src := &tapeSource{}
		for _, c := range f.Changes {
			p, err := hex.DecodeString(c.Patch)
			if err != nil {
				t.Fatal(err)
			}
			since := ""
			if c.Since != nil {
				since = *c.Since
			}
			src.changes = append(src.changes, Change{NextLSN: c.Next, FullRefresh: c.Full, Patch: p})
			src.since = append(src.since, since)
		}
		// a change set that did not fit the recorded reader's copy makes
		// the Refresher fetch the whole value in the same call, as it did
		r := NewRefresher(src, RefresherOptions{})
		for src.next < len(src.changes) {
			if err := r.Refresh(context.Background()); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		raw, err := hex.DecodeString(f.Whole)
		if err != nil {
			t.Fatal(err)
		}
		whole, err := Parse(raw)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		missing, missingWhole := 0, 0
		for _, k := range f.Keys {
			ok, err := r.Contains(k)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !ok {
				missing++
			}
			if ok, err = whole.Contains(k); err != nil || !ok {
				missingWhole++
			}
		}
		t.Logf("seed %d, %s: %d keys; missing from bf_tracked_filter %d, from the copy of %d change sets %d",
			tape.Seed, name, len(f.Keys), missingWhole, len(src.changes), missing)
		if missing > 0 || missingWhole > 0 {
			t.Errorf("%s: of %d keys, %d missing from bf_tracked_filter, %d from the copy", name, len(f.Keys), missingWhole, missing)
		}
	}
}
