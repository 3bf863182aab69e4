"""pgbloomfilter: read the filters of the PostgreSQL `bloomfilter`
extension and answer lookups locally, exactly as the server would.

    from pgbloomfilter import BloomFilter
    f = BloomFilter(raw_bytes)           # f::bytea, binary COPY, a binary result
    f = BloomFilter.from_text(text)      # f::text
    42 in f; f.contains("x"); f.contains(("user-1", "color"))
    f.is_growing; f.layers              # a growing filter (bf_create_growing) reads alike
    f.is_union                          # a union (a distributed table's filter): read-only

    from pgbloomfilter import BloomWindow
    w = BloomWindow(raw_bytes)           # a bloomwindow (sliding window)
    w.contains(("user-1", "color"), datetime.now(timezone.utc))

See README.md for the API, the psycopg integration (pgbloomfilter.adapt)
and the refresher (pgbloomfilter.refresh).
"""

from ._filter import BloomFilter, FilterInfo, GrowingBloomFilter, LayerInfo, UnionBloomFilter
from ._window import BloomWindow, WindowInfo, WindowSlice
from ._keys import numeric_text
from .errors import (BloomFilterError, FamilyMismatchError, FormatError,
                     GrowingFilterError, IncompatibleFiltersError, NonPortableError,
                     PatchError, TextFormatError, UnionFilterError)
from .patch import apply_patch
from .refresh import (Changes, ChangeSource, NotReadyError, PostgresSource,
                      Refresher, RefreshStatus)

__version__ = "1.1.0"

__all__ = [
    "BloomFilter", "FilterInfo", "GrowingBloomFilter", "LayerInfo", "UnionBloomFilter",
    "BloomWindow", "WindowInfo", "WindowSlice",
    "numeric_text", "apply_patch",
    "BloomFilterError", "FamilyMismatchError", "FormatError", "TextFormatError",
    "IncompatibleFiltersError", "GrowingFilterError", "UnionFilterError", "NonPortableError",
    "PatchError",
    "NotReadyError",
    "Changes", "ChangeSource", "PostgresSource", "Refresher", "RefreshStatus",
]
