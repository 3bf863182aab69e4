'use strict';
// Element families (docs/FORMAT.md §3) and the SQL type names that map to
// them, including the record family's 4-bit field nibbles.

const FAMILY = Object.freeze({
  none: 0, integer: 1, float: 2, numeric: 3, text: 4, bytea: 5, uuid: 6,
  boolean: 7, date: 8, timestamp: 9, timestamptz: 10, enum: 11, record: 12, other: 13,
});
const FAMILY_NAMES = Object.freeze(Object.keys(FAMILY));
const MAX_RECORD_FIELDS = 8;

// SQL type names (pg_type.typname and the usual spellings) -> family
const SQL_TYPES = Object.freeze({
  int2: 'integer', int4: 'integer', int8: 'integer', smallint: 'integer',
  integer: 'integer', int: 'integer', bigint: 'integer',
  float4: 'float', float8: 'float', real: 'float', 'double precision': 'float', float: 'float',
  numeric: 'numeric', decimal: 'numeric',
  text: 'text', varchar: 'text', 'character varying': 'text', name: 'text',
  bpchar: 'text', char: 'text', character: 'text',
  bytea: 'bytea', uuid: 'uuid', bool: 'boolean', boolean: 'boolean', date: 'date',
  timestamp: 'timestamp', 'timestamp without time zone': 'timestamp',
  timestamptz: 'timestamptz', 'timestamp with time zone': 'timestamptz',
  enum: 'enum', record: 'record',
});

// The OIDs PostgreSQL fixes for the types of a portable family (and
// unknown, hashed as text): a filter of family other never names one of
// them in its family detail, and the server refuses a value that does
// (docs/FORMAT.md §3.1).
const PORTABLE_TYPE_OIDS = new Map([
  [16, 'bool'], [17, 'bytea'], [19, 'name'], [20, 'int8'], [21, 'int2'], [23, 'int4'],
  [25, 'text'], [700, 'float4'], [701, 'float8'], [705, 'unknown'], [1042, 'bpchar'],
  [1043, 'varchar'], [1082, 'date'], [1114, 'timestamp'], [1184, 'timestamptz'],
  [1700, 'numeric'], [2950, 'uuid'],
]);

/** The field families of a record's family detail, field 1 first. */
function recordFields(detail) {
  const out = [];
  for (let i = 0; i < MAX_RECORD_FIELDS; i++) {
    const f = (detail >>> (4 * i)) & 15;
    if (f === 0) break;
    out.push(f);
  }
  return out;
}

/** Family detail rule of FORMAT.md §1 for a record: 1-8 nibbles, no gap. */
function recordDetailValid(detail) {
  let ended = false;
  let n = 0;
  for (let i = 0; i < MAX_RECORD_FIELDS; i++) {
    const f = (detail >>> (4 * i)) & 15;
    if (f === 0) ended = true;
    else if (ended || f > FAMILY.other || f === FAMILY.record) return false;
    else n++;
  }
  return n > 0;
}

function recordHasOther(detail) {
  return recordFields(detail).includes(FAMILY.other);
}

/** 'integer', 'record(integer,text)', or 'other' (its type is named only by the server). */
function familyText(family, detail) {
  if (family === FAMILY.record) {
    return `record(${recordFields(detail).map((f) => FAMILY_NAMES[f]).join(',')})`;
  }
  return FAMILY_NAMES[family];
}

module.exports = {
  FAMILY, FAMILY_NAMES, SQL_TYPES, MAX_RECORD_FIELDS, PORTABLE_TYPE_OIDS,
  recordFields, recordDetailValid, recordHasOther, familyText,
};
