"""The Python side of the API: how Python values map to families, adding,
union, errors.  (What the server answers is in test_conformance.py.)"""

import datetime
import decimal
import uuid

import pytest

from pgbloomfilter import (BloomFilter, FamilyMismatchError, FormatError,
                           IncompatibleFiltersError, TextFormatError, numeric_text)


def test_numeric_canonical_text():
    D = decimal.Decimal
    for given, want in [(D("1.50"), "1.5"), (D("1.00"), "1"), (D("0.000"), "0"),
                        (D("-2.0"), "-2"), (D("0.5"), "0.5"), ("-0.0010", "-0.001"),
                        (D("1E+2"), "100"), (D("12.3400E5"), "1234000"), (7, "7"),
                        (D("-0"), "0"), (D("NaN"), "NaN"), ("Infinity", "Infinity"),
                        (D("-Infinity"), "-Infinity"), (D("1E-3"), "0.001"),
                        ("  42.10 ", "42.1"), (D("100"), "100")]:
        assert numeric_text(given) == want, given
    with pytest.raises(FamilyMismatchError):
        numeric_text(1.5)                   # no exact decimal: give a Decimal or str


def test_integers_of_every_width_are_one_family():
    f = BloomFilter.create_sized(4096, 5, 1)
    f.add(5)
    assert f.contains(5) and f.contains(5, "int2") and f.contains("5", "int8")
    assert f.family == "integer"
    assert f.hash(5) == f.hash(5, "int4") == f.hash("5", "smallint")


def test_python_types_and_mismatches():
    f = BloomFilter.create_sized(4096, 5)
    f.add("abc")
    assert "abc" in f
    for bad in (1, 1.0, b"abc", True, decimal.Decimal(1), uuid.uuid4(),
                datetime.date(2000, 1, 1), ("abc",)):
        with pytest.raises(FamilyMismatchError):
            f.contains(bad)
    with pytest.raises(FamilyMismatchError):
        f.contains(object())
    with pytest.raises(FamilyMismatchError):
        f.contains("x", "inet")


def test_bool_is_not_an_integer():
    f = BloomFilter.create_sized(512, 3)
    f.add(1)
    with pytest.raises(FamilyMismatchError):
        f.contains(True)


def test_floats():
    f = BloomFilter.create_sized(4096, 5)
    f.add(0.0)
    assert f.contains(-0.0)                 # -0.0 is written as 0.0
    f.add(float("nan"))
    assert f.contains(float("-nan")) and f.contains("NaN", "float4")
    f.add(0.1, "float4")                    # the float4 nearest 0.1, widened
    assert f.contains(0.10000000149011612) and f.contains("0.1", "real")
    with pytest.raises(ValueError):
        f.contains(1e39, "float4")


def test_dates_and_times():
    f = BloomFilter.create_sized(4096, 5)
    f.add(datetime.date(2024, 2, 29))
    assert f.contains("2024-02-29", "date")
    f2 = BloomFilter.create_sized(4096, 5)
    f2.add(datetime.datetime(2000, 1, 1, 12, 0, 0, 500000))
    assert f2.contains("2000-01-01 12:00:00.5", "timestamp")
    with pytest.raises(FamilyMismatchError):
        f2.contains(datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc))
    f3 = BloomFilter.create_sized(4096, 5)
    tz = datetime.timezone(datetime.timedelta(hours=2))
    f3.add(datetime.datetime(2000, 1, 1, 2, 0, tzinfo=tz))
    assert f3.contains("2000-01-01 00:00:00+00", "timestamptz")
    assert f3.contains("2000-01-01 03:30:00+03:30", "timestamptz")
    assert f3.contains(datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc))
    with pytest.raises(ValueError):
        f3.contains("2000-01-01 00:00:00", "timestamptz")     # no offset
    f4 = BloomFilter.create_sized(4096, 5)
    f4.add("infinity", "date")
    f4.add("0044-03-15 BC", "date")
    assert f4.contains("infinity", "date") and f4.contains("0044-03-15 BC", "date")


def test_composite_keys():
    f = BloomFilter.create_sized(8192, 6, 9)
    f.add((1, "color"))
    f.add((None, "x"), ("int8", "text"))
    assert f.family == "record(integer,text)"
    assert f.contains((1, "color")) and f.contains(("1", "color"), ("int4", "varchar"))
    assert f.contains((None, "x"))          # the None field's family comes from the filter
    with pytest.raises(FamilyMismatchError):
        f.contains(("color", 1))
    with pytest.raises(FamilyMismatchError):
        f.contains((1,))
    with pytest.raises(FamilyMismatchError):
        f.contains((1, "a"), ("int8",))
    e = BloomFilter.create_sized(512, 2)
    with pytest.raises(FamilyMismatchError):
        e.add((None, "x"))                  # an empty filter cannot tell None's type
    with pytest.raises(ValueError):
        e.add(tuple(range(9)))


def test_enum_labels_are_strings():
    f = BloomFilter.create_sized(512, 3)
    f.add("happy", "enum")
    assert f.family == "enum"
    assert f.contains("happy") and f.contains("happy", "enum")
    with pytest.raises(FamilyMismatchError):
        f.contains(b"happy")


def test_empty_filter_answers_false():
    f = BloomFilter.create_sized(512, 3)
    assert f.family == "none"
    assert not f.contains(1) and not f.contains("x") and 1 not in f


def test_add_counts_inserted_like_the_server():
    f = BloomFilter.create_sized(512, 3)
    assert f.add(1) is True and f.inserted == 1
    assert f.add(1) is False and f.inserted == 1


def test_union_and_intersection():
    a = BloomFilter.create_sized(8192, 4, 2)
    b = BloomFilter.create_sized(8192, 4, 2)
    for i in range(100):
        a.add(i)
    for i in range(50, 150):
        b.add(i)
    u = a | b
    assert all(i in u for i in range(150))
    x = a & b
    assert all(i in x for i in range(50, 100))
    with pytest.raises(IncompatibleFiltersError):
        a | BloomFilter.create_sized(8192, 4, 3)
    t = BloomFilter.create_sized(8192, 4, 2)
    t.add("x")
    with pytest.raises(IncompatibleFiltersError):
        a | t
    assert (a | BloomFilter.create_sized(8192, 4, 2)) == a


def test_bytes_and_text_round_trip():
    f = BloomFilter.create_sized(1024, 3, -5)
    f.add(uuid.UUID(int=1))
    assert BloomFilter(f.to_bytes()) == f
    assert BloomFilter.from_text(f.to_text()).to_bytes() == f.to_bytes()
    assert BloomFilter(memoryview(f.to_bytes())) == f
    with pytest.raises(FormatError):
        BloomFilter(f.to_bytes()[:-1])
    with pytest.raises(TextFormatError):
        BloomFilter.from_text(f.to_text() + " ")


def test_text_form_fpr_spellings():
    t = BloomFilter.create_sized(512, 3).to_text()
    for ok in ("fpr=0.01", "fpr=0.5", "fpr=1e-05", "fpr=5e-324", "fpr=-0"):
        assert BloomFilter.from_text(t.replace("fpr=0", ok)).to_text() == t.replace("fpr=0", ok)
    # one text per filter: other spellings of the same rate are refused
    for bad in ("fpr=1e-2", "fpr=.5", "fpr=0.50", "fpr=0.00001", "fpr=+0.5",
                "fpr=1e-400", "fpr=0x1p-7", "fpr=nan", "fpr=inf", "fpr=1"):
        with pytest.raises(TextFormatError):
            BloomFilter.from_text(t.replace("fpr=0", bad))


def test_info():
    f = BloomFilter.create_sized(512 * 4, 3, 0)
    i = f.info()
    assert i.bits_set == 0 and i.estimated_cardinality == 0.0 and i.estimated_fpr == 0.0
    assert not i.saturated and i.portable and i.nbits == 2048 and i.bytes == 64 + 256
    for k in range(1000):
        f.add(k)
    i = f.info()
    assert i.saturated and i.inserted <= 1000 and i.fill_ratio > 0.5


def test_other_never_names_a_portable_type():
    """FORMAT.md §3.1: family other with the OID of a type of a portable
    family is malformed, as the server says; other OIDs are accepted."""
    import struct
    b = bytearray(BloomFilter.create_sized(512, 1).to_bytes())
    b[8], b[9] = 13, 1                      # family other, non-portable
    for oid in (16, 17, 19, 20, 21, 23, 25, 700, 701, 705, 1042, 1043, 1082, 1114,
                1184, 1700, 2950):
        struct.pack_into("<I", b, 12, oid)
        with pytest.raises(FormatError):
            BloomFilter.from_bytes(bytes(b))
    for oid in (869, 1007, 16384, 4000000000):  # inet, int4[], types of a database
        struct.pack_into("<I", b, 12, oid)
        assert BloomFilter.from_bytes(bytes(b)).family == "other"
