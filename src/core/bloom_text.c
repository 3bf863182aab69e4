/*-------------------------------------------------------------------------
 *
 * bloom_text.c
 *	  The text form of docs/FORMAT.md section 5: parsing (strict, one text
 *	  per filter), printing of the parameters, and the shortest round-trip
 *	  printing of the false-positive rate.  No PostgreSQL headers.
 *
 * Numbers go through strtod only as "<digits>e<exponent>", which has no
 * decimal point, so the result does not depend on the locale's
 * LC_NUMERIC; snprintf's "%e" output is read back digit by digit for the
 * same reason.
 *
 *-------------------------------------------------------------------------
 */
#include "bloom_text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- shortest round-trip decimal of a double ---- */

/* the double nearest to digits[0..nd) * 10^(exp10 - nd + 1) */
static double
decimal_value(const char *digits, int nd, int exp10)
{
	char		buf[48];

	snprintf(buf, sizeof(buf), "%.*se%d", nd, digits, exp10 - nd + 1);
	return strtod(buf, NULL);
}

/* x correctly rounded to p significant digits: digits and the exponent */
static void
round_to_digits(double x, int p, char *digits, int *exp10)
{
	char		buf[48];
	int			nd = 0;
	const char *q = buf;

	snprintf(buf, sizeof(buf), "%.*e", p - 1, x);
	for (; *q && *q != 'e'; q++)
		if (*q >= '0' && *q <= '9')
			digits[nd++] = *q;
	*exp10 = *q == 'e' ? atoi(q + 1) : 0;
}

/* the next p-digit decimal up (up) or down from digits * 10^exp10 */
static void
step_digits(char *digits, int p, int *exp10, bool up)
{
	int			i = p - 1;

	if (up)
	{
		while (i >= 0 && digits[i] == '9')
			digits[i--] = '0';
		if (i >= 0)
			digits[i]++;
		else
		{
			digits[0] = '1';	/* 99..9 + 1 = 10..0, one decade up */
			(*exp10)++;
		}
	}
	else
	{
		while (i >= 0 && digits[i] == '0')
			digits[i--] = '9';
		digits[i]--;			/* the leading digit is never 0 */
		if (digits[0] == '0')
		{
			memset(digits, '9', p);	/* 10..0 - 1 = 99..9, a decade down */
			(*exp10)--;
		}
	}
}

/*
 * Shortest digits that read back to x, and among those the nearest to x:
 * for each length the correctly rounded decimal, or failing that its
 * neighbour on the other side of x (the only other candidate of that
 * length that can be nearer than the next length).
 */
int
bloom_fpr_format(double x, char *buf)
{
	char		digits[20];
	int			nd = 0;
	int			e = 0;
	double		ax = fabs(x);
	char	   *o = buf;

	if (signbit(x))
		*o++ = '-';
	if (ax == 0.0)
	{
		*o++ = '0';
		*o = '\0';
		return (int) (o - buf);
	}
	for (int p = 1; p <= 17; p++)
	{
		double		v;

		round_to_digits(ax, p, digits, &e);
		v = decimal_value(digits, p, e);
		if (v == ax)
		{
			nd = p;
			break;
		}
		step_digits(digits, p, &e, v < ax);
		if (decimal_value(digits, p, e) == ax)
		{
			nd = p;
			break;
		}
	}
	if (nd == 0)				/* 17 digits always read back */
	{
		round_to_digits(ax, 17, digits, &e);
		nd = 17;
	}
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;

	if (e >= -4 && e < 15)
	{
		/* fixed notation, as float8out between 1e-4 and 1e15 */
		if (e < 0)
		{
			*o++ = '0';
			*o++ = '.';
			for (int i = 0; i < -e - 1; i++)
				*o++ = '0';
			memcpy(o, digits, nd);
			o += nd;
		}
		else
		{
			for (int i = 0; i <= e || i < nd; i++)
			{
				if (i == e + 1)
					*o++ = '.';
				*o++ = i < nd ? digits[i] : '0';
			}
		}
		*o = '\0';
		return (int) (o - buf);
	}
	*o++ = digits[0];
	if (nd > 1)
	{
		*o++ = '.';
		memcpy(o, digits + 1, nd - 1);
		o += nd - 1;
	}
	o += sprintf(o, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
	return (int) (o - buf);
}

/*
 * The fpr token: accepted only if it is exactly what bloom_fpr_format
 * prints for the value it denotes.
 */
static bool
parse_fpr(const char *s, size_t len, double *out)
{
	char		digits[24];
	char		num[48];
	char		canon[BLOOM_FPR_BUFLEN];
	int			nd = 0,
				nfrac = 0,
				exp = 0;
	bool		point = false;
	size_t		i = 0;
	char	   *end;
	double		x;

	if (len == 0 || len >= BLOOM_FPR_BUFLEN)
		return false;
	if (s[0] == '-')
		i++;
	for (; i < len && s[i] != 'e'; i++)
	{
		if (s[i] == '.' && !point)
			point = true;
		else if (s[i] >= '0' && s[i] <= '9' && nd < (int) sizeof(digits))
		{
			digits[nd++] = s[i];
			nfrac += point;
		}
		else
			return false;
	}
	if (nd == 0)
		return false;
	if (i < len)
	{
		bool		eneg = false;

		i++;
		if (i < len && (s[i] == '-' || s[i] == '+'))
			eneg = s[i++] == '-';
		if (i == len)
			return false;
		for (; i < len; i++)
		{
			if (s[i] < '0' || s[i] > '9' || exp > 999)
				return false;
			exp = exp * 10 + (s[i] - '0');
		}
		if (eneg)
			exp = -exp;
	}
	snprintf(num, sizeof(num), "%s%.*se%d", s[0] == '-' ? "-" : "", nd, digits,
			 exp - nfrac);
	x = strtod(num, &end);		/* ERANGE for subnormals: compared below */
	if (*end != '\0' || !isfinite(x))
		return false;
	if ((size_t) bloom_fpr_format(x, canon) != len || memcmp(canon, s, len) != 0)
		return false;
	*out = x;
	return true;
}

/* ---- type names ---- */

/* SQL's names of built-in types, as format_type prints them */
static const char *const sql_type_names[][2] = {
	{"bigint", "int8"},
	{"bit", "bit"},
	{"bit varying", "varbit"},
	{"boolean", "bool"},
	{"character", "bpchar"},
	{"character varying", "varchar"},
	{"double precision", "float8"},
	{"integer", "int4"},
	{"interval", "interval"},
	{"numeric", "numeric"},
	{"real", "float4"},
	{"smallint", "int2"},
	{"time with time zone", "timetz"},
	{"time without time zone", "time"},
	{"timestamp with time zone", "timestamptz"},
	{"timestamp without time zone", "timestamp"},
};

/*
 * One identifier at s[*i]: unquoted (lower-case ASCII letter or '_', then
 * those and digits) or double-quoted with "" for a quote, non-empty and at
 * most BLOOM_IDENT_MAX bytes.
 */
static bool
parse_ident(const char *s, size_t len, size_t *i, char *out)
{
	size_t		n = 0;
	size_t		j = *i;

	if (j < len && s[j] == '"')
	{
		for (j++;; j++)
		{
			if (j >= len || s[j] == '\0')
				return false;
			if (s[j] == '"')
			{
				if (j + 1 < len && s[j + 1] == '"')
					j++;
				else
					break;
			}
			if (n >= BLOOM_IDENT_MAX)
				return false;
			out[n++] = s[j];
		}
		j++;					/* the closing quote */
	}
	else
	{
		for (; j < len && ((s[j] >= 'a' && s[j] <= 'z') || s[j] == '_' ||
						   (n > 0 && s[j] >= '0' && s[j] <= '9')); j++)
		{
			if (n >= BLOOM_IDENT_MAX)
				return false;
			out[n++] = s[j];
		}
	}
	if (n == 0)
		return false;
	out[n] = '\0';
	*i = j;
	return true;
}

bool
bloom_type_name_parse(const char *s, size_t len, BloomTypeName *out)
{
	size_t		i = 0;

	memset(out, 0, sizeof(*out));
	if (len >= 2 && memcmp(s + len - 2, "[]", 2) == 0)
	{
		out->array = true;
		len -= 2;
	}
	for (size_t k = 0; k < sizeof(sql_type_names) / sizeof(sql_type_names[0]); k++)
	{
		if (strlen(sql_type_names[k][0]) == len &&
			memcmp(sql_type_names[k][0], s, len) == 0)
		{
			strcpy(out->schema, "pg_catalog");
			strcpy(out->name, sql_type_names[k][1]);
			return true;
		}
	}
	if (!parse_ident(s, len, &i, out->schema) || i >= len || s[i] != '.')
		return false;
	i++;
	return parse_ident(s, len, &i, out->name) && i == len;
}

/* ---- parsing ---- */

typedef struct Cursor
{
	const char *p;
	const char *end;
} Cursor;

/* consume the literal lit */
static bool
take(Cursor *c, const char *lit)
{
	size_t		n = strlen(lit);

	if ((size_t) (c->end - c->p) < n || memcmp(c->p, lit, n) != 0)
		return false;
	c->p += n;
	return true;
}

/* the length of the token at the cursor: up to a space or the end */
static size_t
token(const Cursor *c)
{
	const char *q = c->p;

	while (q < c->end && *q != ' ')
		q++;
	return (size_t) (q - c->p);
}

/* a plain decimal: no sign, no leading zero (but "0"), no overflow */
static bool
parse_u64(const char *s, size_t len, uint64_t *out)
{
	uint64_t	v = 0;

	if (len == 0 || len > 20 || (len > 1 && s[0] == '0'))
		return false;
	for (size_t i = 0; i < len; i++)
	{
		unsigned	d = (unsigned) (s[i] - '0');

		if (s[i] < '0' || s[i] > '9' || v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

/* as parse_u64 with an optional '-' ("-0" is not canonical) */
static bool
parse_i64(const char *s, size_t len, int64_t *out)
{
	bool		neg = len > 0 && s[0] == '-';
	uint64_t	u;

	if (!parse_u64(s + neg, len - neg, &u))
		return false;
	if (neg)
	{
		if (u == 0 || u > (uint64_t) INT64_MAX + 1)
			return false;
		*out = u == (uint64_t) INT64_MAX + 1 ? INT64_MIN : -(int64_t) u;
	}
	else
	{
		if (u > (uint64_t) INT64_MAX)
			return false;
		*out = (int64_t) u;
	}
	return true;
}

/* a family name at the cursor: lower-case letters */
static int
family_at(Cursor *c)
{
	const char *q = c->p;
	int			f;

	while (q < c->end && *q >= 'a' && *q <= 'z')
		q++;
	f = bloom_family_from_name(c->p, (size_t) (q - c->p));
	if (f >= 0)
		c->p = q;
	return f;
}

/*
 * "family=" is done; parse "integer", "record(integer,text)" or
 * "other(NAME)".  NAME runs to the first ')' outside double quotes, so a
 * quoted identifier may hold spaces or parentheses; SQL names with a
 * space ("time without time zone") need no quotes.
 */
static BloomError
parse_family(Cursor *c, BloomTypeResolver resolve, void *arg, BloomText *t)
{
	int			f = family_at(c);

	if (f < 0)
		return BLOOM_ERR_TEXT_FAMILY;
	t->hdr.family = (uint8_t) f;
	t->hdr.detail = 0;
	t->hdr.flags = 0;
	if (f == BF_FAMILY_RECORD)
	{
		int			n = 0;

		if (!take(c, "("))
			return BLOOM_ERR_TEXT_FAMILY;
		do
		{
			int			ff = family_at(c);

			if (ff <= BF_FAMILY_NONE || ff == BF_FAMILY_RECORD ||
				n >= BLOOM_MAX_RECORD_FIELDS)
				return BLOOM_ERR_TEXT_FAMILY;
			if (ff == BF_FAMILY_OTHER)
				t->hdr.flags = BLOOM_FLAG_NONPORTABLE;
			t->hdr.detail |= (uint32_t) ff << (4 * n++);
		} while (take(c, ","));
		if (!take(c, ")"))
			return BLOOM_ERR_TEXT_FAMILY;
	}
	else if (f == BF_FAMILY_OTHER)
	{
		const char *q;
		bool		quoted = false;
		uint32_t	oid = 0;

		if (!take(c, "("))
			return BLOOM_ERR_TEXT_FAMILY;
		for (q = c->p; q < c->end && (quoted || *q != ')'); q++)
		{
			if (*q == '\0')
				return BLOOM_ERR_TEXT_FAMILY;
			if (*q == '"')
				quoted = !quoted;
		}
		if (q == c->end || q == c->p)
			return BLOOM_ERR_TEXT_FAMILY;
		t->typname = c->p;
		t->typnamelen = (size_t) (q - c->p);
		c->p = q + 1;
		if (resolve == NULL || !resolve(arg, t->typname, t->typnamelen, &oid) ||
			oid == 0)
			return BLOOM_ERR_TEXT_TYPE;
		t->hdr.detail = oid;
		t->hdr.flags = BLOOM_FLAG_NONPORTABLE;
	}
	if (c->p < c->end && *c->p != ' ')
		return BLOOM_ERR_TEXT_FAMILY;
	return BLOOM_OK;
}

BloomError
bloom_text_parse(const char *s, size_t len, BloomTypeResolver resolve,
				 void *arg, BloomText *t)
{
	Cursor		c = {s, s + len};
	BloomError	err;
	uint64_t	u;
	size_t		n;

	memset(t, 0, sizeof(*t));
	bloom_header_init(&t->hdr, 1, 1, 0, 0, 0.0);

	if (!take(&c, BLOOM_TEXT_PREFIX))
		return BLOOM_ERR_TEXT_PREFIX;
	if (!take(&c, " layout=blocked") || (c.p < c.end && *c.p != ' '))
		return BLOOM_ERR_TEXT_LAYOUT;
	if (!take(&c, " hash=xxh3_64") || (c.p < c.end && *c.p != ' '))
		return BLOOM_ERR_TEXT_HASH;
	if (!take(&c, " family="))
		return BLOOM_ERR_TEXT_FAMILY;
	if ((err = parse_family(&c, resolve, arg, t)) != BLOOM_OK)
		return err;

	if (!take(&c, " nhashes=") || !parse_u64(c.p, n = token(&c), &u) ||
		u < 1 || u > BLOOM_MAX_HASHES)
		return BLOOM_ERR_TEXT_NHASHES;
	t->hdr.nhashes = (uint16_t) u;
	c.p += n;

	if (!take(&c, " nbits=") || !parse_u64(c.p, n = token(&c), &u) ||
		u == 0 || u % BLOOM_BLOCK_BITS != 0 || u / BLOOM_BLOCK_BITS > BLOOM_MAX_BLOCKS)
		return BLOOM_ERR_TEXT_NBITS;
	t->hdr.nblocks = u / BLOOM_BLOCK_BITS;
	c.p += n;

	if (!take(&c, " seed=") || !parse_i64(c.p, n = token(&c), &t->hdr.seed))
		return BLOOM_ERR_TEXT_SEED;
	c.p += n;

	if (!take(&c, " capacity=") || !parse_i64(c.p, n = token(&c), &t->hdr.capacity) ||
		t->hdr.capacity < 0)
		return BLOOM_ERR_TEXT_CAPACITY;
	c.p += n;

	if (!take(&c, " fpr=") || !parse_fpr(c.p, n = token(&c), &t->hdr.fpr) ||
		!(t->hdr.fpr >= 0.0 && t->hdr.fpr < 1.0))
		return BLOOM_ERR_TEXT_FPR;
	c.p += n;

	if (!take(&c, " inserted=") || !parse_u64(c.p, n = token(&c), &t->hdr.inserted) ||
		t->hdr.inserted > BLOOM_MAX_INSERTED)
		return BLOOM_ERR_TEXT_INSERTED;
	c.p += n;

	if (!take(&c, " bits="))
		return BLOOM_ERR_TEXT_BITS;
	t->bits = c.p;
	t->bitslen = (size_t) (c.end - c.p);
	/* checked before the caller allocates nbits / 8 bytes */
	if (t->bitslen != bloom_base64_encoded_len(t->hdr.nblocks * BLOOM_BLOCK_BYTES))
		return BLOOM_ERR_TEXT_BITS_LENGTH;
	return BLOOM_OK;
}

BloomError
bloom_text_decode(const BloomText *t, uint8_t *buf, size_t buflen)
{
	BloomHeader hdr;

	if (buflen != bloom_total_size(t->hdr.nblocks))
		return BLOOM_ERR_LENGTH;
	bloom_header_write(buf, &t->hdr);
	if (!bloom_base64_decode(t->bits, t->bitslen, buf + BLOOM_HEADER_SIZE,
							 buflen - BLOOM_HEADER_SIZE))
		return BLOOM_ERR_TEXT_BASE64;
	return bloom_header_read(buf, buflen, &hdr);
}

/* ---- printing ---- */

typedef struct Out
{
	char	   *buf;
	size_t		size;
	size_t		len;			/* what is needed, may exceed size */
} Out;

static void
put(Out *o, const char *s, size_t n)
{
	if (o->len < o->size)
		memcpy(o->buf + o->len, s, o->len + n <= o->size ? n : o->size - o->len);
	o->len += n;
}

static void
puts_(Out *o, const char *s)
{
	put(o, s, strlen(s));
}

size_t
bloom_text_format_head(const BloomHeader *hdr, const char *typname,
					   char *buf, size_t buflen)
{
	Out			o = {buf, buflen, 0};
	char		num[64];
	char		fpr[BLOOM_FPR_BUFLEN];

	puts_(&o, BLOOM_TEXT_PREFIX " layout=blocked hash=xxh3_64 family=");
	puts_(&o, bloom_family_name(hdr->family));
	if (hdr->family == BF_FAMILY_RECORD)
	{
		for (int i = 0; i < BLOOM_MAX_RECORD_FIELDS; i++)
		{
			unsigned	f = (hdr->detail >> (4 * i)) & 0xF;

			if (f == 0)
				break;
			puts_(&o, i == 0 ? "(" : ",");
			puts_(&o, bloom_family_name((int) f));
		}
		puts_(&o, ")");
	}
	else if (hdr->family == BF_FAMILY_OTHER)
	{
		puts_(&o, "(");
		puts_(&o, typname ? typname : "");
		puts_(&o, ")");
	}
	bloom_fpr_format(hdr->fpr, fpr);
	snprintf(num, sizeof(num), " nhashes=%u nbits=%llu seed=%lld",
			 (unsigned) hdr->nhashes,
			 (unsigned long long) (hdr->nblocks * BLOOM_BLOCK_BITS),
			 (long long) hdr->seed);
	puts_(&o, num);
	snprintf(num, sizeof(num), " capacity=%lld fpr=", (long long) hdr->capacity);
	puts_(&o, num);
	puts_(&o, fpr);
	snprintf(num, sizeof(num), " inserted=%llu bits=",
			 (unsigned long long) hdr->inserted);
	puts_(&o, num);
	if (o.size > 0)
		o.buf[o.len < o.size ? o.len : o.size - 1] = '\0';
	return o.len;
}
