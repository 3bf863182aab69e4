"""Exceptions of pgbloomfilter.

Each carries the SQLSTATE PostgreSQL reports for the same mistake, so that
an application can treat a local and a server-side refusal alike.
"""


class BloomFilterError(Exception):
    """Base class of every error this package raises."""
    sqlstate = "XX000"


class FormatError(BloomFilterError, ValueError):
    """The bytes or the text are not a valid filter (FORMAT.md §1, §5):
    the server rejects them too (22P03 for bytes, 22P02 for text)."""
    sqlstate = "22P03"


class FamilyMismatchError(BloomFilterError, TypeError):
    """A value of another element family than the filter's (the server:
    42804, datatype_mismatch); the same value in another family hashes
    differently, so the answer would be meaningless."""
    sqlstate = "42804"


class NonPortableError(BloomFilterError):
    """The filter holds values of a type only PostgreSQL can hash (family
    `other`, or a record with such a field): it can be stored and
    combined here, but not asked about a value."""
    sqlstate = "0A000"


class IncompatibleFiltersError(BloomFilterError, ValueError):
    """Union or intersection of filters with different parameters (the
    server: 22023, invalid_parameter_value)."""
    sqlstate = "22023"


class GrowingFilterError(BloomFilterError):
    """An operation a growing filter (FORMAT.md §9) does not support here:
    adding to it (the server adds, appending layers as they fill) or set
    algebra (the server refuses it too: 0A000, feature_not_supported)."""
    sqlstate = "0A000"


class UnionFilterError(BloomFilterError):
    """An operation a union (FORMAT.md §10: filters of any sizes side by
    side, such as a distributed table's, one per shard) does not support:
    it is read-only, since no layer is the one a new key belongs in, and
    set algebra refuses it (the server: 0A000, feature_not_supported)."""
    sqlstate = "0A000"


class PatchError(BloomFilterError, ValueError):
    """A change set (API-CONTRACTS §1) that cannot be applied to the local
    copy: the next refresh fetches the whole value."""
    sqlstate = "22P03"


class TextFormatError(FormatError):
    """The text form is not valid (the server: 22P02)."""
    sqlstate = "22P02"
