/*-------------------------------------------------------------------------
 *
 * bloom_text.h
 *	  The text form of a filter (docs/FORMAT.md section 5), free of any
 *	  PostgreSQL header: the parser, the printer of the parameters and the
 *	  canonical printing of the false-positive rate.
 *
 * There is exactly one text for each filter: the parser accepts only what
 * the printer prints (no leading zeros, no empty record fields, the
 * shortest fpr that reads back), and the bytes it yields are validated by
 * bloom_header_read like those of every other input path.  The one thing
 * outside the format, the name of a non-portable filter's type, is
 * resolved by a callback, so that clients and fuzzers can use the parser.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BLOOM_TEXT_H
#define BLOOM_TEXT_H

#include "bloom_core.h"

#define BLOOM_TEXT_PREFIX	"bloomfilter:1"

/* longest fpr text: "-2.2250738585072014e-308" and a terminator */
#define BLOOM_FPR_BUFLEN	32

/*
 * Resolve the type name of "family=other(NAME)" (len bytes, no NUL inside)
 * to the OID stored in the family detail.  Returns false when the name is
 * not an acceptable type; *oid must then be left alone or set to 0.
 */
typedef bool (*BloomTypeResolver) (void *arg, const char *name, size_t len,
								   uint32_t *oid);

/*
 * A type name as the server's format_type_be_qualified prints it:
 * "schema.name" (each part an identifier, double-quoted unless it is
 * lower-case ASCII letters, digits and underscores), or one of the SQL
 * standard names of built-in types ("time without time zone", "double
 * precision", ...: schema "pg_catalog" and their catalog name here), and
 * an optional "[]" for the array type.
 */
#define BLOOM_IDENT_MAX		63	/* NAMEDATALEN - 1 */

typedef struct BloomTypeName
{
	char		schema[BLOOM_IDENT_MAX + 1];
	char		name[BLOOM_IDENT_MAX + 1];
	bool		array;
} BloomTypeName;

extern bool bloom_type_name_parse(const char *s, size_t len, BloomTypeName *out);

/* the parameters of a text form and where its base64 bits are */
typedef struct BloomText
{
	BloomHeader hdr;
	const char *bits;			/* base64, not decoded yet */
	size_t		bitslen;
	const char *typname;		/* family other: the name in parentheses */
	size_t		typnamelen;
} BloomText;

/*
 * Parse s[0 .. len) up to the bits.  Nothing is allocated: the caller
 * then allocates bloom_total_size(out->hdr.nblocks) bytes and calls
 * bloom_text_decode.  resolve may be NULL (every "other" type is then
 * refused).
 */
extern BloomError bloom_text_parse(const char *s, size_t len,
								   BloomTypeResolver resolve, void *arg,
								   BloomText *out);

/*
 * Write the header and the decoded bits of a parsed text form into buf
 * (buflen = bloom_total_size(t->hdr.nblocks)) and validate the result.
 */
extern BloomError bloom_text_decode(const BloomText *t, uint8_t *buf,
									size_t buflen);

/*
 * The text form up to and including "bits=" into buf, snprintf-style:
 * returns the length it needs (without the terminator) and writes at most
 * buflen bytes.  typname is the type's name for family other (ignored
 * otherwise).  The base64 of the bits follows (bloom_base64_encode).
 */
extern size_t bloom_text_format_head(const BloomHeader *hdr, const char *typname,
									 char *buf, size_t buflen);

/*
 * The shortest decimal text that reads back to x, in the notation of
 * PostgreSQL's float8 output and Python's repr ("0.01", "1e-05", "-0",
 * "5e-324").  x must be finite.  Returns the length.
 */
extern int	bloom_fpr_format(double x, char *buf);

#endif							/* BLOOM_TEXT_H */
