"""The refresher against a fake source that behaves as the contract of
bf_index_changes says (API-CONTRACTS §1)."""

import threading
import time

import pytest

from pgbloomfilter import (BloomFilter, Changes, NotReadyError, PatchError,
                           Refresher)
from pgbloomfilter.patch import full_patch, make_patch

PAGE = 64


class FakeServer:
    """A filter on a 'server' with a WAL position that grows at each change,
    answering changes(since) with the pages changed after since."""

    def __init__(self, nblocks=64, seed=3):
        self.filter = BloomFilter.create_sized(512 * nblocks, 4, seed)
        self.lsn = 1
        self.page_lsn = {}                  # page offset -> lsn of its last change
        self.fail = None                    # an exception to raise on the next call
        self.corrupt = False
        self.gate = None                    # an Event the next call waits on
        self.calls = []
        self.lock = threading.Lock()

    def add(self, *keys):
        with self.lock:
            before = self.filter.to_bytes()
            for k in keys:
                self.filter.add(k)
            after = self.filter.to_bytes()
            self.lsn += 1
            for off in range(0, len(after), PAGE):
                if before[off:off + PAGE] != after[off:off + PAGE]:
                    self.page_lsn[off] = self.lsn

    def rebuild(self, nblocks):
        with self.lock:
            self.filter = BloomFilter.create_sized(512 * nblocks, 4, 3)
            self.lsn += 1
            self.page_lsn = {}
            self.rebuilt_at = self.lsn

    # the ChangeSource protocol
    def changes(self, since):
        self.calls.append(since)
        if self.gate is not None:
            self.gate.wait(5)
        if self.fail is not None:
            e, self.fail = self.fail, None
            raise e
        with self.lock:
            value = self.filter.to_bytes()
            lsn = self.lsn
            if since is None or int(since) < getattr(self, "rebuilt_at", 0):
                return Changes(str(lsn), True, full_patch(value))
            runs = [(off, value[off:off + PAGE]) for off in sorted(self.page_lsn)
                    if self.page_lsn[off] > int(since)]
            p = make_patch(runs, len(value))
            if self.corrupt:
                self.corrupt = False
                p = p[:-1]
            return Changes(str(lsn), False, p)

    def close(self):
        pass


def test_not_ready_before_the_first_refresh():
    r = Refresher(FakeServer())
    with pytest.raises(NotReadyError):
        r.contains(1)
    st = r.status()
    assert not st.ready and st.age == float("inf")


def test_full_then_incremental():
    s = FakeServer()
    s.add(*range(100))
    r = Refresher(s)
    r.refresh()
    assert all(r.contains(i) for i in range(100))
    assert s.calls == [None]
    s.add(*range(1000, 1010))
    assert not all(r.contains(i) for i in range(1000, 1010))   # not yet refreshed
    r.refresh()
    assert all(r.contains(i) for i in range(1000, 1010))
    assert r.filter.to_bytes() == s.filter.to_bytes()
    st = r.status()
    assert st.refreshes == 2 and st.full_refreshes == 1 and st.lsn == str(s.lsn)
    assert s.calls[1] is not None                              # asked from a position
    # the incremental patch held only the changed pages
    assert st.bytes_received < 2 * len(s.filter.to_bytes())


def test_nothing_changed_keeps_the_same_object():
    s = FakeServer()
    s.add(1)
    r = Refresher(s)
    r.refresh()
    f = r.filter
    r.refresh()
    assert r.filter is f


def test_a_failing_source_keeps_the_last_copy():
    s = FakeServer()
    s.add(*range(10))
    errors = []
    r = Refresher(s, on_error=errors.append)
    r.refresh()
    s.fail = ConnectionError("server gone")
    with pytest.raises(ConnectionError):
        r.refresh()
    st = r.status()
    assert isinstance(st.last_error, ConnectionError) and st.failures == 1
    assert all(r.contains(i) for i in range(10))
    assert st.age >= 0
    s.add(50)
    r.refresh()                                     # recovered
    assert r.contains(50)
    assert r.status().refreshes == 2


def test_a_corrupt_patch_keeps_the_copy_and_fetches_everything_next():
    s = FakeServer()
    s.add(*range(10))
    r = Refresher(s)
    r.refresh()
    before = r.filter
    s.add(77)
    s.corrupt = True
    with pytest.raises(PatchError):
        r.refresh()
    assert r.filter is before
    r.refresh()
    assert s.calls[-1] is None                      # a full fetch
    assert r.contains(77)


def test_a_rebuilt_filter_of_another_size_is_fetched_in_full():
    s = FakeServer(nblocks=8)
    s.add(*range(10))
    r = Refresher(s)
    r.refresh()
    s.rebuild(16)
    s.add(5)
    r.refresh()
    assert r.filter.nbits == 16 * 512 and r.contains(5)


def test_a_patch_for_another_length_is_refused():
    class Liar(FakeServer):
        def changes(self, since):
            ch = super().changes(since)
            if since is not None:
                return Changes(ch.next_lsn, False, make_patch([], 12345))
            return ch

    s = Liar()
    s.add(1)
    r = Refresher(s)
    r.refresh()
    with pytest.raises(PatchError):
        r.refresh()
    assert r.contains(1)
    assert r.status().lsn is None                   # the next call asks for everything


def test_readers_never_see_a_half_applied_refresh():
    s = FakeServer(nblocks=32)
    r = Refresher(s)
    r.refresh()
    versions = {r.filter.to_bytes()}
    stop = threading.Event()
    bad = []

    def reader():
        while not stop.is_set():
            f = r.filter
            b = f.to_bytes()
            if b not in versions:
                bad.append(b)
            time.sleep(0)

    threads = [threading.Thread(target=reader) for _ in range(3)]
    # every version the readers may see is registered before the swap
    for t in threads:
        t.start()
    for i in range(30):
        s.add(*range(i * 20, i * 20 + 20))
        versions.add(s.filter.to_bytes())
        r.refresh()
    stop.set()
    for t in threads:
        t.join()
    assert not bad
    assert r.filter.to_bytes() == s.filter.to_bytes()


def test_a_refresh_in_progress_does_not_block_readers():
    s = FakeServer()
    s.add(1)
    r = Refresher(s)
    r.refresh()
    s.gate = threading.Event()
    t = threading.Thread(target=r.refresh)
    t.start()
    time.sleep(0.05)
    assert r.contains(1)                            # answers from the old copy meanwhile
    s.gate.set()
    t.join()


def test_background_thread_finds_new_keys_within_interval():
    s = FakeServer()
    r = Refresher(s, interval=0.05).start()
    try:
        assert r.wait_ready(5)
        s.add(424242)
        t0 = time.monotonic()
        while not r.contains(424242):
            assert time.monotonic() - t0 < 5
            time.sleep(0.01)
        st = r.status()
        assert st.age < 5 and st.refreshes >= 2
    finally:
        r.close()
    assert r._thread is None


def test_background_thread_survives_errors():
    s = FakeServer()
    seen = []
    with Refresher(s, interval=0.02, on_error=seen.append) as r:
        assert r.wait_ready(5)
        s.fail = OSError("connection reset")
        t0 = time.monotonic()
        while not seen:
            assert time.monotonic() - t0 < 5
            time.sleep(0.01)
        s.add(99)
        while not r.contains(99):
            assert time.monotonic() - t0 < 5
            time.sleep(0.01)
        assert isinstance(r.status().last_error, OSError)


def test_interval_must_be_positive():
    with pytest.raises(ValueError):
        Refresher(FakeServer(), interval=0)
