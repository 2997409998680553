/*
 * OTLP/protobuf ExportTraceServiceRequest -> the column buffers of otel_traces.
 *
 * The compiled twin of ingest/_otlp.py's decode_request (which stays the
 * specification and the fallback): the same rows, the same rejected spans
 * and reasons, the same input-limit cuts and counts, byte for byte. It reads
 * the protobuf wire format directly and writes Arrow buffers (int32 offsets
 * plus UTF-8 data, int64 values), so no Python object is made per span or per
 * attribute, and it runs without the GIL (taken back only to print a double
 * the way Python's repr does).
 *
 * It answers only what it is sure to answer exactly as the Python path would.
 * Anything else makes decode() return None and the caller decodes the body in
 * Python: a malformed or truncated message, bad UTF-8 in a string field, a
 * known field with an unexpected wire type, groups, a singular message field
 * given twice (protobuf merges those), more than one member of an AnyValue
 * oneof, string-table indexes (key_strindex, string_value_strindex), entity
 * references, duplicate keys in a key-value list (or one of over 256 keys),
 * nesting deeper than BAIL_DEPTH, or a column over 2 GiB. Wire compatibility:
 * unknown fields are skipped as protobuf does.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BAIL_DEPTH 32
#define MAX_NS 9223372036854775807ULL

enum { OK = 0, BAIL = 1, NOMEM = 2 };

/* ---------------------------------------------------------------- buffers */

typedef struct {
    char *p;
    size_t len, cap;
} buf_t;

static int buf_grow(buf_t *b, size_t n) {
    size_t cap = b->cap ? b->cap : 1024;
    while (cap < b->len + n) cap *= 2;
    char *q = realloc(b->p, cap);
    if (!q) return NOMEM;
    b->p = q;
    b->cap = cap;
    return OK;
}

static inline int buf_put(buf_t *b, const void *s, size_t n) {
    if (b->len + n > b->cap && buf_grow(b, n)) return NOMEM;
    if (n) memcpy(b->p + b->len, s, n);
    b->len += n;
    return OK;
}

static inline int buf_putc(buf_t *b, char c) {
    if (b->len + 1 > b->cap && buf_grow(b, 1)) return NOMEM;
    b->p[b->len++] = c;
    return OK;
}

static inline int buf_i32(buf_t *b, int32_t v) { return buf_put(b, &v, 4); }
static inline int buf_i64(buf_t *b, int64_t v) { return buf_put(b, &v, 8); }

#define TRY(x) do { int _rc = (x); if (_rc) return _rc; } while (0)

/* A string column: int32 offsets (starting at 0) and data. */
typedef struct {
    buf_t off, data;
} strcol_t;

static int str_init(strcol_t *c) { return buf_i32(&c->off, 0); }

static inline int str_end(strcol_t *c) { /* close the value written into c->data */
    if (c->data.len > INT32_MAX) return BAIL;
    return buf_i32(&c->off, (int32_t)c->data.len);
}

static inline int str_add(strcol_t *c, const char *s, size_t n) {
    TRY(buf_put(&c->data, s, n));
    return str_end(c);
}

/* A list (or map) offsets column: int32 offsets into a child. */
static inline int off_add(buf_t *off, size_t n) {
    if (n > INT32_MAX) return BAIL;
    return buf_i32(off, (int32_t)n);
}

/* A Map(String, String) column: entry offsets, keys, values. */
typedef struct {
    buf_t off;
    strcol_t keys, vals;
} mapcol_t;

static int map_init(mapcol_t *m) {
    TRY(buf_i32(&m->off, 0));
    TRY(str_init(&m->keys));
    return str_init(&m->vals);
}

static inline size_t map_entries(mapcol_t *m) { return m->keys.off.len / 4 - 1; }

/* Truncation counters, in the order of _limits.Truncations' kinds. */
enum { T_SPAN_NAME, T_ATTR_KEY, T_ATTR_VALUE, T_ATTR_COUNT, T_EVENT_COUNT, T_LINK_COUNT,
       T_DEPTH, T_KINDS };
static const char *T_NAMES[T_KINDS] = {"span_name", "attribute_key", "attribute_value",
                                       "attribute_count", "event_count", "link_count",
                                       "nesting_depth"};

typedef struct {
    long long max_name, max_key, max_value; /* max_value < 0: no cap */
    long long max_attributes, max_events, max_links, max_depth;
} limits_t;

/* Every output column of one request (see SPAN_SCHEMA in _otlp.py). */
typedef struct {
    buf_t ts;                 /* Timestamp int64 */
    strcol_t trace_id, span_id, parent_id, trace_state, name, kind, service;
    mapcol_t rattrs;          /* ResourceAttributes */
    strcol_t scope_name, scope_version;
    mapcol_t attrs;           /* SpanAttributes */
    buf_t duration;           /* uint64 */
    strcol_t status_code, status_msg;
    buf_t ev_off, ev_ts;      /* Events.* share the list offsets (one map per event) */
    strcol_t ev_name;
    mapcol_t ev_attrs;
    buf_t lk_off;             /* Links.* share the list offsets */
    strcol_t lk_trace_id, lk_span_id, lk_trace_state;
    mapcol_t lk_attrs;
    strcol_t project;
    size_t rows;
} cols_t;

/* ------------------------------------------------------------- wire format */

typedef struct {
    const uint8_t *p, *end;
} rd_t;

static inline int rd_varint(rd_t *r, uint64_t *out) {
    uint64_t v = 0;
    for (int i = 0; i < 10; i++) {
        if (r->p >= r->end) return BAIL;
        uint8_t b = *r->p++;
        if (i == 9 && b > 1) return BAIL; /* over 64 bits: let protobuf decide */
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *out = v;
            return OK;
        }
    }
    return BAIL;
}

static inline int rd_tag(rd_t *r, uint32_t *field, int *wt) {
    uint64_t t;
    TRY(rd_varint(r, &t));
    if (t > 0xffffffffULL || (t >> 3) == 0) return BAIL;
    *field = (uint32_t)(t >> 3);
    *wt = (int)(t & 7);
    return OK;
}

static inline int rd_bytes(rd_t *r, rd_t *sub) {
    uint64_t n;
    TRY(rd_varint(r, &n));
    if (n > (uint64_t)(r->end - r->p)) return BAIL;
    sub->p = r->p;
    sub->end = r->p + n;
    r->p += n;
    return OK;
}

static inline int rd_fixed64(rd_t *r, uint64_t *v) {
    if (r->end - r->p < 8) return BAIL;
    memcpy(v, r->p, 8);
    r->p += 8;
    return OK;
}

static int rd_skip(rd_t *r, int wt) {
    uint64_t v;
    rd_t sub;
    switch (wt) {
    case 0: return rd_varint(r, &v);
    case 1: if (r->end - r->p < 8) return BAIL; r->p += 8; return OK;
    case 2: return rd_bytes(r, &sub);
    case 5: if (r->end - r->p < 4) return BAIL; r->p += 4; return OK;
    default: return BAIL; /* groups and invalid wire types */
    }
}

#define WANT(wt, expected) do { if ((wt) != (expected)) return BAIL; } while (0)

/* ------------------------------------------------------------------- text */

static int utf8_ok(const uint8_t *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        if (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (!(w & 0x8080808080808080ULL)) { i += 8; continue; }
        }
        uint8_t c = s[i];
        if (c < 0x80) { i++; continue; }
        if (c >= 0xc2 && c <= 0xdf) {
            if (i + 1 >= n || (s[i + 1] & 0xc0) != 0x80) return 0;
            i += 2;
        } else if (c >= 0xe0 && c <= 0xef) {
            if (i + 2 >= n || (s[i + 1] & 0xc0) != 0x80 || (s[i + 2] & 0xc0) != 0x80) return 0;
            if (c == 0xe0 && s[i + 1] < 0xa0) return 0;  /* overlong */
            if (c == 0xed && s[i + 1] > 0x9f) return 0;  /* surrogate */
            i += 3;
        } else if (c >= 0xf0 && c <= 0xf4) {
            if (i + 3 >= n || (s[i + 1] & 0xc0) != 0x80 || (s[i + 2] & 0xc0) != 0x80
                || (s[i + 3] & 0xc0) != 0x80) return 0;
            if (c == 0xf0 && s[i + 1] < 0x90) return 0;  /* overlong */
            if (c == 0xf4 && s[i + 1] > 0x8f) return 0;  /* over U+10FFFF */
            i += 4;
        } else {
            return 0;
        }
    }
    return 1;
}

/* A string field: its bytes, UTF-8 checked (protobuf refuses bad UTF-8). */
static inline int rd_string(rd_t *r, rd_t *s) {
    TRY(rd_bytes(r, s));
    return utf8_ok(s->p, (size_t)(s->end - s->p)) ? OK : BAIL;
}

/* Characters (code points) of valid UTF-8, as Python's len(str). */
static size_t utf8_chars(const char *s, size_t n) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++) k += ((uint8_t)s[i] & 0xc0) != 0x80;
    return k;
}

/* Bytes of the first ``chars`` characters of valid UTF-8. */
static size_t utf8_prefix(const char *s, size_t n, size_t chars) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (((uint8_t)s[i] & 0xc0) != 0x80) {
            if (k == chars) return i;
            k++;
        }
    }
    return n;
}

/* Cut the text written into ``b`` since ``start`` to ``limit`` characters (cap_text). */
static void cap_tail(buf_t *b, size_t start, long long limit, long long *counter) {
    if (limit < 0) return;
    size_t n = b->len - start;
    if ((size_t)limit >= n) return; /* fewer bytes than the limit: fewer characters too */
    if (utf8_chars(b->p + start, n) > (size_t)limit) {
        (*counter)++;
        b->len = start + utf8_prefix(b->p + start, n, (size_t)limit);
    }
}

static const char HEX[] = "0123456789abcdef";

static int put_hex(buf_t *b, const uint8_t *s, size_t n) {
    if (b->len + 2 * n > b->cap && buf_grow(b, 2 * n)) return NOMEM;
    char *o = b->p + b->len;
    for (size_t i = 0; i < n; i++) {
        o[2 * i] = HEX[s[i] >> 4];
        o[2 * i + 1] = HEX[s[i] & 15];
    }
    b->len += 2 * n;
    return OK;
}

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int put_base64(buf_t *b, const uint8_t *s, size_t n) {
    size_t out = (n + 2) / 3 * 4;
    if (b->len + out > b->cap && buf_grow(b, out)) return NOMEM;
    char *o = b->p + b->len;
    size_t i = 0, j = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
        o[j++] = B64[v >> 18];
        o[j++] = B64[(v >> 12) & 63];
        o[j++] = B64[(v >> 6) & 63];
        o[j++] = B64[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)s[i] << 16;
        o[j++] = B64[v >> 18];
        o[j++] = B64[(v >> 12) & 63];
        o[j++] = '=';
        o[j++] = '=';
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8;
        o[j++] = B64[v >> 18];
        o[j++] = B64[(v >> 12) & 63];
        o[j++] = B64[(v >> 6) & 63];
        o[j++] = '=';
    }
    b->len += out;
    return OK;
}

static int put_i64(buf_t *b, int64_t v) {
    char tmp[24];
    int k = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do { tmp[k++] = (char)('0' + u % 10); u /= 10; } while (u);
    if (v < 0) tmp[k++] = '-';
    if (b->len + (size_t)k > b->cap && buf_grow(b, (size_t)k)) return NOMEM;
    for (int i = 0; i < k; i++) b->p[b->len + i] = tmp[k - 1 - i];
    b->len += (size_t)k;
    return OK;
}

/* repr(d) (Python's shortest round-trip form); takes the GIL for a moment. */
static int put_repr(buf_t *b, double d) {
    PyGILState_STATE g = PyGILState_Ensure();
    char *s = PyOS_double_to_string(d, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
    int rc = NOMEM;
    if (s) {
        rc = buf_put(b, s, strlen(s));
        PyMem_Free(s);
    } else {
        PyErr_Clear();
    }
    PyGILState_Release(g);
    return rc;
}

/* _otlp._double_str: integral doubles without ".0"; NaN, Inf, -Inf spelled out. */
static int put_double_attr(buf_t *b, double d) {
    if (d != d) return buf_put(b, "NaN", 3);
    if (d == 1.0 / 0.0) return buf_put(b, "Inf", 3);
    if (d == -1.0 / 0.0) return buf_put(b, "-Inf", 4);
    if (d > -1e16 && d < 1e16 && d == (double)(int64_t)d) return put_i64(b, (int64_t)d);
    return put_repr(b, d);
}

/* json.dumps(float): repr, NaN, Infinity, -Infinity. */
static int put_double_json(buf_t *b, double d) {
    if (d != d) return buf_put(b, "NaN", 3);
    if (d == 1.0 / 0.0) return buf_put(b, "Infinity", 8);
    if (d == -1.0 / 0.0) return buf_put(b, "-Infinity", 9);
    return put_repr(b, d);
}

/* json.dumps(str, ensure_ascii=False): quotes, backslash and control characters escaped. */
static int put_json_str(buf_t *b, const uint8_t *s, size_t n) {
    TRY(buf_putc(b, '"'));
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        TRY(buf_put(b, s + run, i - run));
        run = i + 1;
        char esc[7];
        switch (c) {
        case '"': TRY(buf_put(b, "\\\"", 2)); break;
        case '\\': TRY(buf_put(b, "\\\\", 2)); break;
        case '\n': TRY(buf_put(b, "\\n", 2)); break;
        case '\r': TRY(buf_put(b, "\\r", 2)); break;
        case '\t': TRY(buf_put(b, "\\t", 2)); break;
        case '\b': TRY(buf_put(b, "\\b", 2)); break;
        case '\f': TRY(buf_put(b, "\\f", 2)); break;
        default:
            esc[0] = '\\'; esc[1] = 'u'; esc[2] = '0'; esc[3] = '0';
            esc[4] = HEX[c >> 4]; esc[5] = HEX[c & 15];
            TRY(buf_put(b, esc, 6));
        }
    }
    TRY(buf_put(b, s + run, n - run));
    return buf_putc(b, '"');
}

/* --------------------------------------------------------------- AnyValue */

enum { AV_NONE = 0, AV_STRING = 1, AV_BOOL = 2, AV_INT = 3, AV_DOUBLE = 4, AV_ARRAY = 5,
       AV_KVLIST = 6, AV_BYTES = 7 };

typedef struct {
    int kind;
    uint64_t num;   /* bool, int, double bits */
    rd_t sub;       /* string, bytes, array, kvlist */
} av_t;

static int av_parse(rd_t r, av_t *av) {
    av->kind = AV_NONE;
    int seen = 0;
    while (r.p < r.end) {
        uint32_t f;
        int wt;
        TRY(rd_tag(&r, &f, &wt));
        if (f >= 1 && f <= 8) {
            if (seen++) return BAIL; /* a oneof given twice: protobuf's last-wins/merge */
            switch (f) {
            case 1: WANT(wt, 2); TRY(rd_string(&r, &av->sub)); break;
            case 2: case 3: WANT(wt, 0); TRY(rd_varint(&r, &av->num)); break;
            case 4: WANT(wt, 1); TRY(rd_fixed64(&r, &av->num)); break;
            case 5: case 6: case 7: WANT(wt, 2); TRY(rd_bytes(&r, &av->sub)); break;
            default: return BAIL; /* string_value_strindex */
            }
            av->kind = (int)f;
        } else {
            TRY(rd_skip(&r, wt));
        }
    }
    return OK;
}

/* A KeyValue: its key (UTF-8 checked) and value bytes. */
static int kv_parse(rd_t r, rd_t *key, rd_t *val, int *has_val) {
    key->p = key->end = r.p;
    *has_val = 0;
    while (r.p < r.end) {
        uint32_t f;
        int wt;
        TRY(rd_tag(&r, &f, &wt));
        if (f == 1) { WANT(wt, 2); TRY(rd_string(&r, key)); }
        else if (f == 2) { WANT(wt, 2); if ((*has_val)++) return BAIL; TRY(rd_bytes(&r, val)); }
        else if (f == 3) return BAIL; /* key_strindex */
        else TRY(rd_skip(&r, wt));
    }
    if (!*has_val) val->p = val->end = r.end;
    return OK;
}

typedef struct {
    const limits_t *lim;
    long long *counts;   /* T_KINDS counters (a scratch array when nothing is kept) */
    long long max_depth; /* nesting cap (huge when only validating) */
} ctx_t;

static int json_av(ctx_t *cx, rd_t r, buf_t *out, int depth);

/* _any_value_py for an array or kvlist at ``depth``, written as JSON. */
static int json_container(ctx_t *cx, int kind, rd_t r, buf_t *out, int depth) {
    if (depth >= BAIL_DEPTH) return BAIL;
    if (depth >= cx->max_depth) {
        cx->counts[T_DEPTH]++;
        /* Python still parsed what is under the cut: check it (counts discarded) */
        long long scratch[T_KINDS] = {0};
        ctx_t check = {cx->lim, scratch, (long long)1 << 40};
        buf_t tmp = {0};
        int rc = json_container(&check, kind, r, &tmp, depth);
        free(tmp.p);
        if (rc) return rc;
        return buf_put(out, "\"...\"", 5);
    }
    TRY(buf_putc(out, kind == AV_ARRAY ? '[' : '{'));
    int first = 1;
    /* kvlist keys seen (a dict keeps one entry per key: duplicates go to Python) */
    rd_t keys_small[32];
    rd_t *keys = keys_small;
    size_t nkeys = 0, capkeys = 32;
    int rc = OK;
    while (r.p < r.end && rc == OK) {
        uint32_t f;
        int wt;
        rd_t item;
        if ((rc = rd_tag(&r, &f, &wt))) break;
        if (f != 1) { rc = rd_skip(&r, wt); continue; }
        if (wt != 2) { rc = BAIL; break; }
        if ((rc = rd_bytes(&r, &item))) break;
        if (!first && (rc = buf_putc(out, ','))) break;
        first = 0;
        if (kind == AV_ARRAY) {
            rc = json_av(cx, item, out, depth + 1);
            continue;
        }
        rd_t key, val;
        int has_val;
        if ((rc = kv_parse(item, &key, &val, &has_val))) break;
        size_t klen = (size_t)(key.end - key.p);
        for (size_t i = 0; i < nkeys; i++) {
            if ((size_t)(keys[i].end - keys[i].p) == klen && !memcmp(keys[i].p, key.p, klen)) {
                rc = BAIL;
                break;
            }
        }
        if (rc) break;
        if (nkeys == capkeys) {
            /* the duplicate check is quadratic: a list of over 256 keys goes to Python */
            if (capkeys >= 256) { rc = BAIL; break; }
            rd_t *grown = malloc(sizeof(rd_t) * capkeys * 2);
            if (!grown) { rc = NOMEM; break; }
            memcpy(grown, keys, sizeof(rd_t) * nkeys);
            if (keys != keys_small) free(keys);
            keys = grown;
            capkeys *= 2;
        }
        keys[nkeys++] = key;
        if ((rc = put_json_str(out, key.p, klen))) break;
        if ((rc = buf_putc(out, ':'))) break;
        if (has_val) rc = json_av(cx, val, out, depth + 1);
        else rc = buf_put(out, "null", 4);
    }
    if (keys != keys_small) free(keys);
    if (rc) return rc;
    return buf_putc(out, kind == AV_ARRAY ? ']' : '}');
}

static int json_av(ctx_t *cx, rd_t r, buf_t *out, int depth) {
    av_t av;
    TRY(av_parse(r, &av));
    switch (av.kind) {
    case AV_NONE: return buf_put(out, "null", 4);
    case AV_STRING: return put_json_str(out, av.sub.p, (size_t)(av.sub.end - av.sub.p));
    case AV_BOOL: return av.num ? buf_put(out, "true", 4) : buf_put(out, "false", 5);
    case AV_INT: return put_i64(out, (int64_t)av.num);
    case AV_DOUBLE: { double d; memcpy(&d, &av.num, 8); return put_double_json(out, d); }
    case AV_BYTES:
        TRY(buf_putc(out, '"'));
        TRY(put_base64(out, av.sub.p, (size_t)(av.sub.end - av.sub.p)));
        return buf_putc(out, '"');
    default: return json_container(cx, av.kind, av.sub, out, depth);
    }
}

/* any_value_to_str (uncapped): an attribute value as the collector's exporter writes it. */
static int attr_value(ctx_t *cx, rd_t r, buf_t *out) {
    av_t av;
    TRY(av_parse(r, &av));
    switch (av.kind) {
    case AV_NONE: return OK;
    case AV_STRING: return buf_put(out, av.sub.p, (size_t)(av.sub.end - av.sub.p));
    case AV_BOOL: return av.num ? buf_put(out, "true", 4) : buf_put(out, "false", 5);
    case AV_INT: return put_i64(out, (int64_t)av.num);
    case AV_DOUBLE: { double d; memcpy(&d, &av.num, 8); return put_double_attr(out, d); }
    case AV_BYTES: return put_base64(out, av.sub.p, (size_t)(av.sub.end - av.sub.p));
    default: return json_container(cx, av.kind, av.sub, out, 0);
    }
}

/* Check a KeyValue nobody keeps (past a cap): protobuf parsed it, so it must parse. */
static int kv_check(const limits_t *lim, rd_t r) {
    rd_t key, val;
    int has_val;
    TRY(kv_parse(r, &key, &val, &has_val));
    if (!has_val) return OK;
    long long scratch[T_KINDS] = {0};
    ctx_t cx = {lim, scratch, (long long)1 << 40};
    buf_t tmp = {0};
    int rc = attr_value(&cx, val, &tmp);
    free(tmp.p);
    return rc;
}

/* A growable list of message slices (a span's attributes, events, links). */
typedef struct {
    rd_t *v;
    size_t n, cap;
} slices_t;

static int slices_add(slices_t *s, rd_t item) {
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        rd_t *q = realloc(s->v, cap * sizeof(rd_t));
        if (!q) return NOMEM;
        s->v = q;
        s->cap = cap;
    }
    s->v[s->n++] = item;
    return OK;
}

/* _limits.cap_attributes into one map entry list: count cap, key cap, value cap. */
static int put_attrs(ctx_t *cx, const slices_t *kvs, mapcol_t *m) {
    const limits_t *lim = cx->lim;
    for (size_t i = 0; i < kvs->n; i++) {
        if ((long long)i >= lim->max_attributes) {
            cx->counts[T_ATTR_COUNT]++;
            TRY(kv_check(lim, kvs->v[i]));
            continue;
        }
        rd_t key, val;
        int has_val;
        TRY(kv_parse(kvs->v[i], &key, &val, &has_val));
        size_t klen = (size_t)(key.end - key.p);
        if ((long long)klen > lim->max_key && (long long)utf8_chars((const char *)key.p, klen) > lim->max_key) {
            cx->counts[T_ATTR_KEY]++;
            TRY(kv_check(lim, kvs->v[i]));
            continue;
        }
        TRY(str_add(&m->keys, (const char *)key.p, klen));
        size_t start = m->vals.data.len;
        if (has_val) TRY(attr_value(cx, val, &m->vals.data));
        cap_tail(&m->vals.data, start, lim->max_value, &cx->counts[T_ATTR_VALUE]);
        TRY(str_end(&m->vals));
    }
    return off_add(&m->off, map_entries(m));
}

/* ------------------------------------------------------------------ spans */

typedef struct {
    size_t ts, duration, ev_off, ev_ts, lk_off;
    size_t str_off[32], str_data[32];
    size_t map_off[8];
    size_t rows;
} mark_t;

/* Every string column and map column, for marking and rolling back a span. */
static int str_cols(cols_t *c, strcol_t **out) {
    strcol_t *all[] = {&c->trace_id, &c->span_id, &c->parent_id, &c->trace_state, &c->name,
                       &c->kind, &c->service, &c->rattrs.keys, &c->rattrs.vals, &c->scope_name,
                       &c->scope_version, &c->attrs.keys, &c->attrs.vals, &c->status_code,
                       &c->status_msg, &c->ev_name, &c->ev_attrs.keys, &c->ev_attrs.vals,
                       &c->lk_trace_id, &c->lk_span_id, &c->lk_trace_state, &c->lk_attrs.keys,
                       &c->lk_attrs.vals, &c->project};
    int n = (int)(sizeof(all) / sizeof(all[0]));
    for (int i = 0; i < n; i++) out[i] = all[i];
    return n;
}

static int map_cols(cols_t *c, mapcol_t **out) {
    out[0] = &c->rattrs; out[1] = &c->attrs; out[2] = &c->ev_attrs; out[3] = &c->lk_attrs;
    return 4;
}

static void mark(cols_t *c, mark_t *m) {
    strcol_t *s[32];
    mapcol_t *mp[8];
    int n = str_cols(c, s), k = map_cols(c, mp);
    for (int i = 0; i < n; i++) { m->str_off[i] = s[i]->off.len; m->str_data[i] = s[i]->data.len; }
    for (int i = 0; i < k; i++) m->map_off[i] = mp[i]->off.len;
    m->ts = c->ts.len; m->duration = c->duration.len; m->ev_off = c->ev_off.len;
    m->ev_ts = c->ev_ts.len; m->lk_off = c->lk_off.len;
    m->rows = c->rows;
}

static void rollback(cols_t *c, const mark_t *m) {
    strcol_t *s[32];
    mapcol_t *mp[8];
    int n = str_cols(c, s), k = map_cols(c, mp);
    for (int i = 0; i < n; i++) { s[i]->off.len = m->str_off[i]; s[i]->data.len = m->str_data[i]; }
    for (int i = 0; i < k; i++) mp[i]->off.len = m->map_off[i];
    c->ts.len = m->ts; c->duration.len = m->duration; c->ev_off.len = m->ev_off;
    c->ev_ts.len = m->ev_ts; c->lk_off.len = m->lk_off;
    c->rows = m->rows;
}

static const char *KINDS[] = {"Unspecified", "Internal", "Server", "Client", "Producer", "Consumer"};
static const char *STATUS[] = {"Unset", "Ok", "Error"};

typedef struct {
    rd_t service;               /* capped service.name value, or empty */
    rd_t scope_name, scope_version;
    const char *rattrs_keys, *rattrs_vals;  /* this resource's capped attributes */
    const int32_t *rk_off, *rv_off;
    size_t rattrs_n;
} res_t;

typedef struct {
    const char *reason;  /* NULL: accepted */
} verdict_t;

/* Emit the resource's attributes (decoded once per ResourceSpans) into one more row. */
static int put_rattrs(cols_t *c, const res_t *res) {
    mapcol_t *m = &c->rattrs;
    for (size_t i = 0; i < res->rattrs_n; i++) {
        TRY(str_add(&m->keys, res->rattrs_keys + res->rk_off[i], (size_t)(res->rk_off[i + 1] - res->rk_off[i])));
        TRY(str_add(&m->vals, res->rattrs_vals + res->rv_off[i], (size_t)(res->rv_off[i + 1] - res->rv_off[i])));
    }
    return off_add(&m->off, map_entries(m));
}

/* Name a message's string field with a cap (cap_text). */
static int put_capped(strcol_t *col, rd_t s, long long limit, long long *counter) {
    size_t start = col->data.len;
    TRY(buf_put(&col->data, s.p, (size_t)(s.end - s.p)));
    cap_tail(&col->data, start, limit, counter);
    return str_end(col);
}

static int all_zero(rd_t s) {
    for (const uint8_t *p = s.p; p < s.end; p++) if (*p) return 0;
    return 1;
}

typedef struct {
    rd_t trace_id, span_id, trace_state, name;
    uint64_t time;
    slices_t attrs;
} sub_t; /* an event or a link */

/* Clear an event or link for reuse (its attribute list keeps its memory). */
static void sub_reset(sub_t *e, const uint8_t *at) {
    slices_t keep = e->attrs;
    memset(e, 0, sizeof(*e));
    e->attrs = keep;
    e->attrs.n = 0;
    e->trace_id.p = e->trace_id.end = e->span_id.p = e->span_id.end = at;
    e->trace_state.p = e->trace_state.end = e->name.p = e->name.end = at;
}

static int event_parse(rd_t r, sub_t *e) {
    sub_reset(e, r.p);
    while (r.p < r.end) {
        uint32_t f;
        int wt;
        TRY(rd_tag(&r, &f, &wt));
        switch (f) {
        case 1: WANT(wt, 1); TRY(rd_fixed64(&r, &e->time)); break;
        case 2: WANT(wt, 2); TRY(rd_string(&r, &e->name)); break;
        case 3: { rd_t kv; WANT(wt, 2); TRY(rd_bytes(&r, &kv)); TRY(slices_add(&e->attrs, kv)); break; }
        case 4: WANT(wt, 0); TRY(rd_skip(&r, wt)); break;
        default: TRY(rd_skip(&r, wt));
        }
    }
    return OK;
}

static int link_parse(rd_t r, sub_t *l) {
    sub_reset(l, r.p);
    while (r.p < r.end) {
        uint32_t f;
        int wt;
        TRY(rd_tag(&r, &f, &wt));
        switch (f) {
        case 1: WANT(wt, 2); TRY(rd_bytes(&r, &l->trace_id)); break;
        case 2: WANT(wt, 2); TRY(rd_bytes(&r, &l->span_id)); break;
        case 3: WANT(wt, 2); TRY(rd_string(&r, &l->trace_state)); break;
        case 4: { rd_t kv; WANT(wt, 2); TRY(rd_bytes(&r, &kv)); TRY(slices_add(&l->attrs, kv)); break; }
        case 5: WANT(wt, 0); TRY(rd_skip(&r, wt)); break;
        case 6: WANT(wt, 5); TRY(rd_skip(&r, wt)); break;
        default: TRY(rd_skip(&r, wt));
        }
    }
    return OK;
}

typedef struct {
    slices_t attrs, events, links;
    sub_t *subs;
    size_t subs_cap;
} scratch_t;

/* One Span message -> one row, or a reason it is rejected (_otlp._span_row). */
static int span_row(cols_t *c, const limits_t *lim, long long *counts, const res_t *res,
                    rd_t r, scratch_t *sc, const char **reason) {
    rd_t tid = {r.p, r.p}, sid = {r.p, r.p}, pid = {r.p, r.p}, tstate = {r.p, r.p},
         name = {r.p, r.p}, smsg = {r.p, r.p};
    uint64_t kind = 0, start = 0, end = 0, code = 0;
    int has_status = 0;
    sc->attrs.n = sc->events.n = sc->links.n = 0;
    while (r.p < r.end) {
        uint32_t f;
        int wt;
        rd_t item;
        TRY(rd_tag(&r, &f, &wt));
        switch (f) {
        case 1: WANT(wt, 2); TRY(rd_bytes(&r, &tid)); break;
        case 2: WANT(wt, 2); TRY(rd_bytes(&r, &sid)); break;
        case 3: WANT(wt, 2); TRY(rd_string(&r, &tstate)); break;
        case 4: WANT(wt, 2); TRY(rd_bytes(&r, &pid)); break;
        case 5: WANT(wt, 2); TRY(rd_string(&r, &name)); break;
        case 6: WANT(wt, 0); TRY(rd_varint(&r, &kind)); break;
        case 7: WANT(wt, 1); TRY(rd_fixed64(&r, &start)); break;
        case 8: WANT(wt, 1); TRY(rd_fixed64(&r, &end)); break;
        case 9: WANT(wt, 2); TRY(rd_bytes(&r, &item)); TRY(slices_add(&sc->attrs, item)); break;
        case 11: WANT(wt, 2); TRY(rd_bytes(&r, &item)); TRY(slices_add(&sc->events, item)); break;
        case 13: WANT(wt, 2); TRY(rd_bytes(&r, &item)); TRY(slices_add(&sc->links, item)); break;
        case 10: case 12: case 14: WANT(wt, 0); TRY(rd_skip(&r, wt)); break;
        case 16: WANT(wt, 5); TRY(rd_skip(&r, wt)); break;
        case 15: {
            WANT(wt, 2);
            if (has_status++) return BAIL; /* a message field given twice is merged */
            TRY(rd_bytes(&r, &item));
            while (item.p < item.end) {
                uint32_t g;
                int gwt;
                TRY(rd_tag(&item, &g, &gwt));
                if (g == 2) { WANT(gwt, 2); TRY(rd_string(&item, &smsg)); }
                else if (g == 3) { WANT(gwt, 0); TRY(rd_varint(&item, &code)); }
                else TRY(rd_skip(&item, gwt));
            }
            break;
        }
        default: TRY(rd_skip(&r, wt));
        }
    }
    size_t nsub = sc->events.n + sc->links.n;
    if (nsub > sc->subs_cap) {
        sub_t *q = realloc(sc->subs, nsub * sizeof(sub_t));
        if (!q) return NOMEM;
        memset(q + sc->subs_cap, 0, (nsub - sc->subs_cap) * sizeof(sub_t));
        sc->subs = q;
        sc->subs_cap = nsub;
    }
    sub_t *ev = sc->subs, *lk = sc->subs + sc->events.n;
    int late_event = 0;
    for (size_t i = 0; i < sc->events.n; i++) {
        TRY(event_parse(sc->events.v[i], &ev[i]));
        late_event |= ev[i].time > MAX_NS;
    }
    for (size_t i = 0; i < sc->links.n; i++) TRY(link_parse(sc->links.v[i], &lk[i]));

    size_t tlen = (size_t)(tid.end - tid.p), slen = (size_t)(sid.end - sid.p);
    size_t plen = (size_t)(pid.end - pid.p);
    *reason = NULL;
    if (tlen != 16 || all_zero(tid)) *reason = "invalid trace_id (must be 16 bytes, not all zero)";
    else if (slen != 8 || all_zero(sid)) *reason = "invalid span_id (must be 8 bytes, not all zero)";
    else if (plen && plen != 8) *reason = "invalid parent_span_id (must be 8 bytes or empty)";
    else if (start > MAX_NS || end > MAX_NS || late_event) *reason = "timestamp out of range (after 2262-04-11)";

    long long scratch[T_KINDS] = {0};
    ctx_t cx = {lim, *reason ? scratch : counts, lim->max_depth};
    mark_t m;
    mark(c, &m);
    int rc = OK;
#define EMIT(x) do { if ((rc = (x))) goto done; } while (0)
    EMIT(buf_i64(&c->ts, (int64_t)start));
    EMIT(put_hex(&c->trace_id.data, tid.p, tlen)); EMIT(str_end(&c->trace_id));
    EMIT(put_hex(&c->span_id.data, sid.p, slen)); EMIT(str_end(&c->span_id));
    EMIT(put_hex(&c->parent_id.data, pid.p, plen)); EMIT(str_end(&c->parent_id));
    EMIT(str_add(&c->trace_state, (const char *)tstate.p, (size_t)(tstate.end - tstate.p)));
    EMIT(put_capped(&c->name, name, lim->max_name, &cx.counts[T_SPAN_NAME]));
    int32_t k32 = (int32_t)kind, c32 = (int32_t)code;
    const char *ks = (k32 >= 0 && k32 < 6) ? KINDS[k32] : "Unspecified";
    const char *cs = (c32 >= 0 && c32 < 3) ? STATUS[c32] : "Unset";
    EMIT(str_add(&c->kind, ks, strlen(ks)));
    EMIT(str_add(&c->service, (const char *)res->service.p, (size_t)(res->service.end - res->service.p)));
    EMIT(put_rattrs(c, res));
    EMIT(str_add(&c->scope_name, (const char *)res->scope_name.p, (size_t)(res->scope_name.end - res->scope_name.p)));
    EMIT(str_add(&c->scope_version, (const char *)res->scope_version.p,
                 (size_t)(res->scope_version.end - res->scope_version.p)));
    EMIT(put_attrs(&cx, &sc->attrs, &c->attrs));
    EMIT(buf_i64(&c->duration, (int64_t)(end > start ? end - start : 0)));
    EMIT(str_add(&c->status_code, cs, strlen(cs)));
    EMIT(str_add(&c->status_msg, (const char *)smsg.p, (size_t)(smsg.end - smsg.p)));
    size_t kept = sc->events.n;
    if ((long long)kept > lim->max_events) {
        cx.counts[T_EVENT_COUNT] += (long long)kept - lim->max_events;
        kept = (size_t)lim->max_events;
    }
    for (size_t i = 0; i < sc->events.n; i++) {
        if (i >= kept) {  /* dropped, but parsed by protobuf all the same */
            for (size_t j = 0; j < ev[i].attrs.n; j++) EMIT(kv_check(lim, ev[i].attrs.v[j]));
            continue;
        }
        EMIT(buf_i64(&c->ev_ts, (int64_t)ev[i].time));
        EMIT(put_capped(&c->ev_name, ev[i].name, lim->max_name, &cx.counts[T_SPAN_NAME]));
        EMIT(put_attrs(&cx, &ev[i].attrs, &c->ev_attrs));
    }
    EMIT(off_add(&c->ev_off, c->ev_ts.len / 8));
    kept = sc->links.n;
    if ((long long)kept > lim->max_links) {
        cx.counts[T_LINK_COUNT] += (long long)kept - lim->max_links;
        kept = (size_t)lim->max_links;
    }
    for (size_t i = 0; i < sc->links.n; i++) {
        if (i >= kept) {
            for (size_t j = 0; j < lk[i].attrs.n; j++) EMIT(kv_check(lim, lk[i].attrs.v[j]));
            continue;
        }
        EMIT(put_hex(&c->lk_trace_id.data, lk[i].trace_id.p, (size_t)(lk[i].trace_id.end - lk[i].trace_id.p)));
        EMIT(str_end(&c->lk_trace_id));
        EMIT(put_hex(&c->lk_span_id.data, lk[i].span_id.p, (size_t)(lk[i].span_id.end - lk[i].span_id.p)));
        EMIT(str_end(&c->lk_span_id));
        EMIT(str_add(&c->lk_trace_state, (const char *)lk[i].trace_state.p,
                     (size_t)(lk[i].trace_state.end - lk[i].trace_state.p)));
        EMIT(put_attrs(&cx, &lk[i].attrs, &c->lk_attrs));
    }
    EMIT(off_add(&c->lk_off, c->lk_trace_id.off.len / 4 - 1));
    c->rows++;
done:
    if (rc) return rc;
    if (*reason) rollback(c, &m);
    return OK;
#undef EMIT
}

/* ----------------------------------------------------------------- request */

typedef struct {
    cols_t c;
    limits_t lim;
    long long counts[T_KINDS];
    const char **reasons;
    size_t nreasons, capreasons;
    long long rejected;
    const char *project;
    size_t project_len;
} req_t;

static int add_reason(req_t *q, const char *reason) {
    if (q->nreasons == q->capreasons) {
        size_t cap = q->capreasons ? q->capreasons * 2 : 16;
        const char **p = realloc(q->reasons, cap * sizeof(char *));
        if (!p) return NOMEM;
        q->reasons = p;
        q->capreasons = cap;
    }
    q->reasons[q->nreasons++] = reason;
    q->rejected++;
    return OK;
}

static int scope_spans(req_t *q, res_t *res, rd_t r, scratch_t *sc) {
    /* the scope may follow the spans on the wire: find it first */
    rd_t scan = r;
    int has_scope = 0;
    res->scope_name.p = res->scope_name.end = r.p;
    res->scope_version.p = res->scope_version.end = r.p;
    while (scan.p < scan.end) {
        uint32_t f;
        int wt;
        rd_t item;
        TRY(rd_tag(&scan, &f, &wt));
        if (f == 1) {
            WANT(wt, 2);
            if (has_scope++) return BAIL;
            TRY(rd_bytes(&scan, &item));
            while (item.p < item.end) {
                uint32_t g;
                int gwt;
                TRY(rd_tag(&item, &g, &gwt));
                if (g == 1) { WANT(gwt, 2); TRY(rd_string(&item, &res->scope_name)); }
                else if (g == 2) { WANT(gwt, 2); TRY(rd_string(&item, &res->scope_version)); }
                else if (g == 3) {
                    rd_t kv;
                    WANT(gwt, 2);
                    TRY(rd_bytes(&item, &kv));
                    TRY(kv_check(&q->lim, kv)); /* scope attributes are not stored */
                }
                else if (g == 4) { WANT(gwt, 0); TRY(rd_skip(&item, gwt)); }
                else TRY(rd_skip(&item, gwt));
            }
        } else if (f == 2) {
            WANT(wt, 2);
            TRY(rd_bytes(&scan, &item));
        } else if (f == 3) {
            WANT(wt, 2);
            TRY(rd_string(&scan, &item));
        } else {
            TRY(rd_skip(&scan, wt));
        }
    }
    while (r.p < r.end) {
        uint32_t f;
        int wt;
        rd_t item;
        TRY(rd_tag(&r, &f, &wt));
        if (f != 2) { TRY(rd_skip(&r, wt)); continue; }
        TRY(rd_bytes(&r, &item));
        const char *reason;
        TRY(span_row(&q->c, &q->lim, q->counts, res, item, sc, &reason));
        if (reason) TRY(add_reason(q, reason));
    }
    return OK;
}

static int resource_spans(req_t *q, rd_t r, scratch_t *sc) {
    rd_t scan = r, resource = {r.p, r.p};
    int has_resource = 0;
    while (scan.p < scan.end) {
        uint32_t f;
        int wt;
        rd_t item;
        TRY(rd_tag(&scan, &f, &wt));
        if (f == 1) {
            WANT(wt, 2);
            if (has_resource++) return BAIL;
            TRY(rd_bytes(&scan, &resource));
        } else if (f == 2) {
            WANT(wt, 2);
            TRY(rd_bytes(&scan, &item));
        } else if (f == 3) {
            WANT(wt, 2);
            TRY(rd_string(&scan, &item));
        } else {
            TRY(rd_skip(&scan, wt));
        }
    }
    /* the resource's attributes, capped once (counted once) for all its spans */
    slices_t kvs = {0};
    mapcol_t ra = {0};
    int rc = map_init(&ra);
    rd_t rr = resource;
    while (rc == OK && rr.p < rr.end) {
        uint32_t f;
        int wt;
        rd_t item;
        if ((rc = rd_tag(&rr, &f, &wt))) break;
        if (f == 1) {
            if (wt != 2) { rc = BAIL; break; }
            if ((rc = rd_bytes(&rr, &item))) break;
            rc = slices_add(&kvs, item);
        } else if (f == 2) {
            rc = wt == 0 ? rd_skip(&rr, wt) : BAIL;
        } else if (f == 3) {
            rc = BAIL; /* entity references: left to protobuf */
        } else {
            rc = rd_skip(&rr, wt);
        }
    }
    if (rc == OK) {
        ctx_t cx = {&q->lim, q->counts, q->lim.max_depth};
        rc = put_attrs(&cx, &kvs, &ra);
    }
    if (rc == OK) {
        res_t res;
        memset(&res, 0, sizeof(res));
        res.rattrs_keys = ra.keys.data.p;
        res.rattrs_vals = ra.vals.data.p;
        res.rk_off = (const int32_t *)ra.keys.off.p;
        res.rv_off = (const int32_t *)ra.vals.off.p;
        res.rattrs_n = map_entries(&ra);
        res.service.p = res.service.end = (const uint8_t *)"";
        for (size_t i = 0; i < res.rattrs_n; i++) {
            size_t klen = (size_t)(res.rk_off[i + 1] - res.rk_off[i]);
            if (klen == 12 && !memcmp(res.rattrs_keys + res.rk_off[i], "service.name", 12)) {
                res.service.p = (const uint8_t *)res.rattrs_vals + res.rv_off[i];
                res.service.end = (const uint8_t *)res.rattrs_vals + res.rv_off[i + 1];
                break;
            }
        }
        while (rc == OK && r.p < r.end) {
            uint32_t f;
            int wt;
            rd_t item;
            if ((rc = rd_tag(&r, &f, &wt))) break;
            if (f != 2) { rc = rd_skip(&r, wt); continue; }
            if ((rc = rd_bytes(&r, &item))) break;
            rc = scope_spans(q, &res, item, sc);
        }
    }
    free(kvs.v);
    free(ra.off.p); free(ra.keys.off.p); free(ra.keys.data.p); free(ra.vals.off.p); free(ra.vals.data.p);
    return rc;
}

static int cols_init(cols_t *c) {
    strcol_t *s[32];
    mapcol_t *mp[8];
    int n = str_cols(c, s), k = map_cols(c, mp);
    for (int i = 0; i < n; i++) TRY(str_init(s[i]));
    for (int i = 0; i < k; i++) TRY(buf_i32(&mp[i]->off, 0));
    TRY(buf_i32(&c->ev_off, 0));
    return buf_i32(&c->lk_off, 0);
}

static int decode_all(req_t *q, const uint8_t *body, size_t n) {
    TRY(cols_init(&q->c));
    rd_t r = {body, body + n};
    scratch_t sc;
    memset(&sc, 0, sizeof(sc));
    int rc = OK;
    while (rc == OK && r.p < r.end) {
        uint32_t f;
        int wt;
        rd_t item;
        if ((rc = rd_tag(&r, &f, &wt))) break;
        if (f != 1) { rc = rd_skip(&r, wt); continue; }
        if (wt != 2) { rc = BAIL; break; }
        if ((rc = rd_bytes(&r, &item))) break;
        rc = resource_spans(q, item, &sc);
    }
    for (size_t i = 0; i < sc.subs_cap; i++) free(sc.subs[i].attrs.v);
    free(sc.attrs.v); free(sc.events.v); free(sc.links.v); free(sc.subs);
    if (rc) return rc;
    for (size_t i = 0; i < q->c.rows; i++) TRY(str_add(&q->c.project, q->project, q->project_len));
    return OK;
}

/* ------------------------------------------------------------ Python side */

/* A malloc'd buffer handed to Python without a copy (buffer protocol). */
typedef struct {
    PyObject_HEAD
    char *p;
    Py_ssize_t len;
} NBuf;

static void nbuf_dealloc(NBuf *self) {
    free(self->p);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int nbuf_getbuffer(NBuf *self, Py_buffer *view, int flags) {
    return PyBuffer_FillInfo(view, (PyObject *)self, self->p ? self->p : "", self->len, 1, flags);
}

static PyBufferProcs nbuf_as_buffer = {(getbufferproc)nbuf_getbuffer, NULL};

static PyTypeObject NBufType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "flywheel.ingest._otlp_native.Buffer",
    .tp_basicsize = sizeof(NBuf),
    .tp_dealloc = (destructor)nbuf_dealloc,
    .tp_as_buffer = &nbuf_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Memory of one decoded column (read-only buffer).",
};

static PyObject *take(buf_t *b) { /* hands b's memory to a Buffer object */
    NBuf *o = PyObject_New(NBuf, &NBufType);
    if (!o) return NULL;
    o->p = b->p;
    o->len = (Py_ssize_t)b->len;
    b->p = NULL;
    b->len = b->cap = 0;
    return (PyObject *)o;
}

static void free_cols(cols_t *c) {
    strcol_t *s[32];
    mapcol_t *mp[8];
    int n = str_cols(c, s), k = map_cols(c, mp);
    for (int i = 0; i < n; i++) { free(s[i]->off.p); free(s[i]->data.p); }
    for (int i = 0; i < k; i++) free(mp[i]->off.p);
    free(c->ts.p); free(c->duration.p); free(c->ev_off.p); free(c->ev_ts.p); free(c->lk_off.p);
}

/* Buffers in the order _otlp_native's Python side reads them (see COLUMN_BUFFERS). */
static PyObject *columns_tuple(cols_t *c) {
    buf_t *order[] = {
        &c->ts,
        &c->trace_id.off, &c->trace_id.data, &c->span_id.off, &c->span_id.data,
        &c->parent_id.off, &c->parent_id.data, &c->trace_state.off, &c->trace_state.data,
        &c->name.off, &c->name.data, &c->kind.off, &c->kind.data,
        &c->service.off, &c->service.data,
        &c->rattrs.off, &c->rattrs.keys.off, &c->rattrs.keys.data, &c->rattrs.vals.off, &c->rattrs.vals.data,
        &c->scope_name.off, &c->scope_name.data, &c->scope_version.off, &c->scope_version.data,
        &c->attrs.off, &c->attrs.keys.off, &c->attrs.keys.data, &c->attrs.vals.off, &c->attrs.vals.data,
        &c->duration,
        &c->status_code.off, &c->status_code.data, &c->status_msg.off, &c->status_msg.data,
        &c->ev_off, &c->ev_ts, &c->ev_name.off, &c->ev_name.data,
        &c->ev_attrs.off, &c->ev_attrs.keys.off, &c->ev_attrs.keys.data,
        &c->ev_attrs.vals.off, &c->ev_attrs.vals.data,
        &c->lk_off, &c->lk_trace_id.off, &c->lk_trace_id.data, &c->lk_span_id.off, &c->lk_span_id.data,
        &c->lk_trace_state.off, &c->lk_trace_state.data,
        &c->lk_attrs.off, &c->lk_attrs.keys.off, &c->lk_attrs.keys.data, &c->lk_attrs.vals.off,
        &c->lk_attrs.vals.data,
        &c->project.off, &c->project.data,
    };
    Py_ssize_t n = (Py_ssize_t)(sizeof(order) / sizeof(order[0]));
    PyObject *t = PyTuple_New(n);
    if (!t) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = take(order[i]);
        if (!o) { Py_DECREF(t); return NULL; }
        PyTuple_SET_ITEM(t, i, o);
    }
    return t;
}

static PyObject *py_decode(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer body;
    const char *project;
    Py_ssize_t project_len;
    req_t q;
    memset(&q, 0, sizeof(q));
    if (!PyArg_ParseTuple(args, "y*s#(LLLLLLL)", &body, &project, &project_len, &q.lim.max_name,
                          &q.lim.max_key, &q.lim.max_value, &q.lim.max_attributes,
                          &q.lim.max_events, &q.lim.max_links, &q.lim.max_depth))
        return NULL;
    q.project = project;
    q.project_len = (size_t)project_len;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = decode_all(&q, (const uint8_t *)body.buf, (size_t)body.len);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&body);
    PyObject *result = NULL;
    if (rc == NOMEM) {
        PyErr_NoMemory();
    } else if (rc == BAIL) {
        result = Py_NewRef(Py_None);
    } else {
        PyObject *cols = columns_tuple(&q.c);
        PyObject *reasons = PyList_New((Py_ssize_t)q.nreasons);
        PyObject *counts = PyDict_New();
        int ok = cols && reasons && counts;
        for (size_t i = 0; ok && i < q.nreasons; i++) {
            PyObject *s = PyUnicode_FromString(q.reasons[i]);
            if (!s) ok = 0; else PyList_SET_ITEM(reasons, (Py_ssize_t)i, s);
        }
        for (int k = 0; ok && k < T_KINDS; k++) {
            if (!q.counts[k]) continue;
            PyObject *v = PyLong_FromLongLong(q.counts[k]);
            ok = v && PyDict_SetItemString(counts, T_NAMES[k], v) == 0;
            Py_XDECREF(v);
        }
        if (ok) result = Py_BuildValue("(nOLOO)", (Py_ssize_t)q.c.rows, cols, q.rejected, reasons, counts);
        Py_XDECREF(cols);
        Py_XDECREF(reasons);
        Py_XDECREF(counts);
    }
    free_cols(&q.c);
    free(q.reasons);
    return result;
}

static PyMethodDef methods[] = {
    {"decode", py_decode, METH_VARARGS,
     "decode(body, project, limits) -> (rows, buffers, rejected, reasons, truncations) or None.\n\n"
     "limits: (max_name, max_key, max_value (-1: none), max_attributes, max_events, max_links,\n"
     "max_depth). None: the body needs the Python decoder (see the module source)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_otlp_native",
    "OTLP/protobuf trace requests decoded into otel_traces column buffers (see _otlp_native.c).",
    -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__otlp_native(void) {
    if (PyType_Ready(&NBufType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    if (PyModule_AddIntConstant(m, "BAIL_DEPTH", BAIL_DEPTH) < 0) { Py_DECREF(m); return NULL; }
    return m;
}
