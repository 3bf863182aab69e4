'use strict';
// Standard base64 with padding (RFC 4648), as the text form's bits= field
// uses it (docs/FORMAT.md §5).  Decoding is strict: only the canonical
// encoding of exactly the expected number of bytes is accepted, as the
// server accepts it.

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const VALUE = new Int16Array(128).fill(-1);
for (let i = 0; i < 64; i++) VALUE[ALPHABET.charCodeAt(i)] = i;
const BODY = /^[A-Za-z0-9+/]*$/;
const NodeBuffer = typeof Buffer === 'function' ? Buffer : null;

function encodedLength(n) {
  return Math.ceil(n / 3) * 4;
}

function encode(bytes) {
  if (NodeBuffer) return NodeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('base64');
  let out = '';
  let i = 0;
  for (; i + 3 <= bytes.length; i += 3) {
    const v = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    out += ALPHABET[v >>> 18] + ALPHABET[(v >>> 12) & 63] + ALPHABET[(v >>> 6) & 63] + ALPHABET[v & 63];
  }
  if (i < bytes.length) {
    const two = i + 1 < bytes.length;
    const v = (bytes[i] << 16) | (two ? bytes[i + 1] << 8 : 0);
    out += ALPHABET[v >>> 18] + ALPHABET[(v >>> 12) & 63] + (two ? ALPHABET[(v >>> 6) & 63] : '=') + '=';
  }
  return out;
}

/**
 * Decode exactly `n` bytes from canonical padded base64; null if `s` is
 * anything else (wrong length, other characters, padding or pad bits).
 */
function decodeExact(s, n) {
  if (s.length !== encodedLength(n)) return null;
  const pad = (3 - (n % 3)) % 3;
  const body = s.length - pad;
  for (let i = body; i < s.length; i++) if (s.charCodeAt(i) !== 0x3d) return null;
  if (!BODY.test(pad ? s.slice(0, body) : s)) return null;
  // the bits below the last byte must be 0, as an encoder writes them
  if (pad === 2 && (VALUE[s.charCodeAt(body - 1)] & 15) !== 0) return null;
  if (pad === 1 && (VALUE[s.charCodeAt(body - 1)] & 3) !== 0) return null;
  if (NodeBuffer) {
    const b = NodeBuffer.from(s, 'base64');
    return new Uint8Array(b.buffer, b.byteOffset, b.length);
  }
  const out = new Uint8Array(n);
  let o = 0;
  for (let i = 0; i < body; i += 4) {
    const v = (VALUE[s.charCodeAt(i)] << 18) | (VALUE[s.charCodeAt(i + 1)] << 12) |
      ((VALUE[s.charCodeAt(i + 2)] & 63) << 6) | (VALUE[s.charCodeAt(i + 3)] & 63);
    out[o++] = v >>> 16;
    if (o < n) out[o++] = (v >>> 8) & 255;
    if (o < n) out[o++] = v & 255;
  }
  return out;
}

module.exports = { encode, decodeExact, encodedLength };
