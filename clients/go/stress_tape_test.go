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
// bf_tracked_changes while writers and online rebuilds ran, and the keys
// each table held at the end.
type stressTape struct {
	Seed    int64 `json:"seed"`
	Filters map[string]struct {
		Changes []struct {
			Since *string `json:"since"`
			Next  string  `json:"next"`
			Full  bool    `json:"full"`
			Patch string  `json:"patch"`
		} `json:"changes"`
		Keys []string `json:"keys"`
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
		missing := 0
		for _, k := range f.Keys {
			ok, err := r.Contains(k)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !ok {
				missing++
			}
		}
		t.Logf("seed %d, %s: %d change sets, %d keys, %d missing", tape.Seed, name, len(src.changes), len(f.Keys), missing)
		if missing > 0 {
			t.Errorf("%s: %d of %d keys missing from the copy", name, missing, len(f.Keys))
		}
	}
}
