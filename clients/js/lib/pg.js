'use strict';
// node-postgres integration: a type parser for the bloomfilter type (text
// and binary results), and sources of changes for the Refresher that read a
// tracked column's or an index's filter.  Works with anything that has
// pg's query(config) method (a Pool, which reconnects after a lost
// connection, or a Client).  Every name sent to the server is
// schema-qualified, so the session's search_path does not matter.

const { BloomFilter } = require('./filter');
const { BloomWindow } = require('./window');
const { BloomFilterError } = require('./errors');

const SCHEMA_SQL = 'SELECT pg_catalog.quote_ident(n.nspname) AS schema, t.oid::pg_catalog.int4 AS oid ' +
  'FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace ' +
  'JOIN pg_catalog.pg_type t ON t.typnamespace = e.extnamespace AND t.typname = $1 ' +
  'WHERE e.extname = \'bloomfilter\'';

// the extension's schema and the OID of its type typname
async function extension(q, typname = 'bloomfilter') {
  const r = await q.query({ text: SCHEMA_SQL, values: [typname] });
  if (r.rows.length !== 1) {
    throw new BloomFilterError('extension "bloomfilter" is not installed in this database', '42704',
      'CREATE EXTENSION bloomfilter, or connect to the database that has it.');
  }
  return r.rows[0];
}

/** The OID of the bloomfilter type in the connected database. */
async function bloomfilterOid(q) {
  return (await extension(q)).oid;
}

function defaultTypes() {
  try {
    return require('pg').types; // the application's node-postgres
  } catch (e) {
    throw new TypeError('pass the type registry: registerBloomfilterType(pool, pg.types)');
  }
}

/**
 * Make node-postgres return bloomfilter columns as BloomFilter objects.
 * (The binary parser is for a driver that hands over the bytes intact;
 * node-postgres 8 decodes binary results as UTF-8 text and loses bytes, so
 * read the text form, as by default.)  `types` is pg.types (global) or a client's
 * own TypeOverrides.  Returns the type's OID.
 */
async function registerBloomfilterType(q, types) {
  return registerType(q, types, 'bloomfilter', BloomFilter);
}

/** As registerBloomfilterType, for bloomwindow columns (BloomWindow objects). */
async function registerBloomwindowType(q, types) {
  return registerType(q, types, 'bloomwindow', BloomWindow);
}

async function registerType(q, types, typname, cls) {
  const reg = types || defaultTypes();
  const { oid } = await extension(q, typname);
  reg.setTypeParser(oid, 'text', (s) => cls.fromText(s));
  reg.setTypeParser(oid, 'binary', (b) => cls.fromBytes(b));
  return oid;
}

// Bytes travel as base64 text: a third more than the bytes, where bytea's
// hex output doubles them, and node-postgres 8 decodes binary results as
// UTF-8 text, which loses bytes.
function fromBase64(s) {
  if (s === null) return null;
  const b = Buffer.from(s, 'base64'); // skips the line breaks encode() writes
  return new Uint8Array(b.buffer, b.byteOffset, b.length);
}

// a source: uses the server's changes function when it exists, else
// fetches the whole value every time
function makeSource(q, changesSig, changesCall, filterCall, args) {
  let schema = null;
  let hasChanges = null;
  return {
    async changes(since) {
      if (schema === null) schema = (await extension(q)).schema;
      if (hasChanges === null || since === null) {
        const r = await q.query({
          text: 'SELECT pg_catalog.to_regprocedure($1) IS NOT NULL AS ok',
          values: [`${schema}.${changesSig}`],
        });
        hasChanges = r.rows[0].ok;
      }
      if (hasChanges) {
        const r = await q.query({
          text: 'SELECT next_lsn::pg_catalog.text AS next_lsn, full_refresh, ' +
            `pg_catalog.encode(patch, 'base64') AS patch FROM ${schema}.${changesCall}`,
          values: [...args, since],
        });
        const row = r.rows[0];
        return { nextLsn: row.next_lsn, fullRefresh: row.full_refresh, patch: fromBase64(row.patch) };
      }
      const r = await q.query({
        text: `SELECT pg_catalog.encode(${schema}.${filterCall}::pg_catalog.bytea, 'base64') AS f`,
        values: args,
      });
      return { nextLsn: null, fullRefresh: true, value: fromBase64(r.rows[0].f) };
    },
  };
}

/** Source of a column tracked with bf_track (bf_tracked_changes / bf_tracked_filter). */
function trackedSource(q, table, column) {
  return makeSource(q,
    'bf_tracked_changes(pg_catalog.regclass,pg_catalog.name,pg_catalog.pg_lsn)',
    'bf_tracked_changes($1::pg_catalog.regclass, $2::pg_catalog.name, $3::pg_catalog.pg_lsn)',
    'bf_tracked_filter($1::pg_catalog.regclass, $2::pg_catalog.name)',
    [table, column]);
}

/** Source of a bloomfilter index (bf_index_changes / bf_index_filter). */
function indexSource(q, index) {
  return makeSource(q,
    'bf_index_changes(pg_catalog.regclass,pg_catalog.pg_lsn)',
    'bf_index_changes($1::pg_catalog.regclass, $2::pg_catalog.pg_lsn)',
    'bf_index_filter($1::pg_catalog.regclass)',
    [index]);
}

module.exports = {
  bloomfilterOid, registerBloomfilterType, registerBloomwindowType, trackedSource, indexSource };
