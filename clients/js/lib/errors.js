'use strict';
// Errors of this package.  Each carries the SQLSTATE the server reports for
// the same mistake, so that callers can treat local and server errors alike.

class BloomFilterError extends Error {
  /**
   * @param {string} message  lower case, what went wrong
   * @param {string} code     SQLSTATE, e.g. '22P03'
   * @param {string} [detail] a full sentence with the particulars
   */
  constructor(message, code, detail) {
    super(detail ? `${message}: ${detail}` : message);
    this.name = 'BloomFilterError';
    this.code = code;
    if (detail) this.detail = detail;
  }
}

// A filter whose hashes depend on PostgreSQL internals (family `other`, or a
// record with such a field): it can be read and combined, never queried.
class NonPortableError extends BloomFilterError {
  constructor(detail) {
    super('the filter is not portable', '0A000', detail);
    this.name = 'NonPortableError';
  }
}

const SQLSTATE = Object.freeze({
  INVALID_BINARY: '22P03',
  INVALID_TEXT: '22P02',
  DATATYPE_MISMATCH: '42804',
  INVALID_PARAMETER: '22023',
  OUT_OF_RANGE: '22003',
  DATETIME_FORMAT: '22007',
  DATETIME_OVERFLOW: '22008',
  NOT_SUPPORTED: '0A000',
});

module.exports = { BloomFilterError, NonPortableError, SQLSTATE };
