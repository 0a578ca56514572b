/*
 * Optional accelerator for linter.codec: walks the same compiled plans as the pure-Python
 * closures (compiler.py), field by field, without the interpreter's per-value dispatch.
 *
 * It never decides anything the Python path would not: on any input it is not sure about
 * (a bad length, a type it does not handle, a value to check against a default, an error) it
 * raises the private Fallback exception and the caller re-runs the pure-Python plan, which is
 * the reference and produces the precise DecodeError/EncodeError with offset and path.
 *
 * Plans (built by StructPlan.native_plan):
 *   struct = (fields, flexible, tagged_decode, tagged_encode, known_keys, n_regular, tagged)
 *   field  = (key, kind, compact, nullable, extra)
 *   tagged = None (the Python tagged_decode reads the tagged section) or a tuple, ascending by
 *            tag, of (tag, field, default, factory): a missing tagged field gets factory() when
 *            factory is not None (a mutable default), else the shared immutable default
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

enum { K_PY = 0, K_INT = 1, K_BOOL = 2, K_FLOAT = 3, K_UUID = 4, K_STRING = 5, K_BYTES = 6,
       K_INT_ARRAY = 7, K_STRUCT_ARRAY = 8, K_STRUCT = 9 };
/* integer codes: 1 int8, 2 int16, 3 int32, 4 int64, 5 uint16, 6 uint32 */
static const int WIDTH[] = {0, 1, 2, 4, 8, 2, 4};
#define MAX_STRING 0x7FFF

static PyObject *Fallback = NULL;
static PyObject *UUID_type = NULL;
static PyObject *s_bytes = NULL;
static PyObject *empty_tuple = NULL;

static PyObject *SafeUnknown = NULL;
static PyObject *s_int = NULL, *s_is_safe = NULL;
static PyObject *s_unknown = NULL;  /* compiler.UNKNOWN_TAGS; codec.py checks that they agree */
#define UNKNOWN_TAGS "_unknownTaggedFields"

static void *fallback(void) { PyErr_SetNone(Fallback); return NULL; }

/* A plan tuple compiled once into C structs (kept in a capsule), so the hot loops read plain
   ints and pointers instead of Python tuples and ints. */
typedef struct Plan Plan;
typedef struct {
    PyObject *key;      /* borrowed from the plan tuple, which the capsule keeps alive */
    Py_hash_t hash;     /* of key, computed once */
    int kind, compact, nullable, code;
    Plan *sub;          /* struct and struct-array fields */
    PyObject *py;       /* (decode, encode) for fields only Python handles */
} Field;
typedef struct {
    uint64_t tag;
    Field field;
    PyObject *dflt, *factory;  /* borrowed from the plan tuple */
} Tagged;
#define MAX_NATIVE_TAGS 64  /* the decoder marks the tags it has seen in one 64-bit word */
struct Plan {
    PyObject *source;   /* the plan tuple (owned) */
    Py_ssize_t n, n_regular;
    Field *fields;
    int flexible;
    PyObject *tagged_decode, *tagged_encode, *known;  /* borrowed from source */
    Py_ssize_t n_tagged;  /* -1: the tagged section is read by tagged_decode, in Python */
    Tagged *tagged;
    Plan **children;    /* sub plans this plan owns */
    Py_ssize_t n_children;
};

static void plan_free(Plan *p) {
    if (!p) return;
    for (Py_ssize_t i = 0; i < p->n_children; i++) plan_free(p->children[i]);
    PyMem_Free(p->children);
    PyMem_Free(p->fields);
    PyMem_Free(p->tagged);
    Py_XDECREF(p->source);
    PyMem_Free(p);
}

static Plan *plan_build(PyObject *t);

/* one field tuple (key, kind, compact, nullable, extra) into F; its sub plan joins owner's children */
static int field_build(Plan *owner, PyObject *f, Field *F) {
    if (!PyTuple_Check(f) || PyTuple_GET_SIZE(f) != 5) { PyErr_SetString(PyExc_TypeError, "bad field"); return -1; }
    F->key = PyTuple_GET_ITEM(f, 0);
    F->hash = PyObject_Hash(F->key);
    F->kind = (int)PyLong_AsLong(PyTuple_GET_ITEM(f, 1));
    F->compact = PyTuple_GET_ITEM(f, 2) == Py_True;
    F->nullable = PyTuple_GET_ITEM(f, 3) == Py_True;
    PyObject *extra = PyTuple_GET_ITEM(f, 4);
    if (F->kind == K_INT || F->kind == K_INT_ARRAY) F->code = (int)PyLong_AsLong(extra);
    else if (F->kind == K_STRUCT || F->kind == K_STRUCT_ARRAY) {
        F->sub = plan_build(extra);
        if (!F->sub) return -1;
        owner->children[owner->n_children++] = F->sub;
    } else if (F->kind == K_PY) F->py = extra;
    return PyErr_Occurred() ? -1 : 0;
}

static Plan *plan_build(PyObject *t) {
    if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 7) { PyErr_SetString(PyExc_TypeError, "bad plan"); return NULL; }
    PyObject *fields = PyTuple_GET_ITEM(t, 0), *tagged = PyTuple_GET_ITEM(t, 6);
    if (tagged != Py_None && (!PyTuple_Check(tagged) || PyTuple_GET_SIZE(tagged) > MAX_NATIVE_TAGS)) {
        PyErr_SetString(PyExc_TypeError, "bad tagged fields");
        return NULL;
    }
    Plan *p = PyMem_Calloc(1, sizeof(Plan));
    if (!p) { PyErr_NoMemory(); return NULL; }
    Py_INCREF(t);
    p->source = t;
    p->n = PyTuple_GET_SIZE(fields);
    p->n_tagged = tagged == Py_None ? -1 : PyTuple_GET_SIZE(tagged);
    Py_ssize_t slots = p->n + (p->n_tagged > 0 ? p->n_tagged : 0);
    p->fields = PyMem_Calloc(p->n ? p->n : 1, sizeof(Field));
    p->tagged = PyMem_Calloc(p->n_tagged > 0 ? p->n_tagged : 1, sizeof(Tagged));
    p->children = PyMem_Calloc(slots ? slots : 1, sizeof(Plan *));
    if (!p->fields || !p->tagged || !p->children) { plan_free(p); PyErr_NoMemory(); return NULL; }
    p->flexible = PyTuple_GET_ITEM(t, 1) == Py_True;
    p->tagged_decode = PyTuple_GET_ITEM(t, 2);
    p->tagged_encode = PyTuple_GET_ITEM(t, 3);
    p->known = PyTuple_GET_ITEM(t, 4);
    p->n_regular = PyLong_AsSsize_t(PyTuple_GET_ITEM(t, 5));
    for (Py_ssize_t i = 0; i < p->n; i++)
        if (field_build(p, PyTuple_GET_ITEM(fields, i), &p->fields[i]) < 0) { plan_free(p); return NULL; }
    for (Py_ssize_t i = 0; i < p->n_tagged; i++) {
        PyObject *entry = PyTuple_GET_ITEM(tagged, i);
        Tagged *T = &p->tagged[i];
        if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 4) {
            PyErr_SetString(PyExc_TypeError, "bad tagged field");
            plan_free(p);
            return NULL;
        }
        T->tag = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(entry, 0));
        T->dflt = PyTuple_GET_ITEM(entry, 2);
        T->factory = PyTuple_GET_ITEM(entry, 3);
        if (PyErr_Occurred() || field_build(p, PyTuple_GET_ITEM(entry, 1), &T->field) < 0) { plan_free(p); return NULL; }
    }
    return p;
}

static void capsule_free(PyObject *capsule) { plan_free(PyCapsule_GetPointer(capsule, "krpc.plan")); }

static PyObject *compile_plan(PyObject *self, PyObject *t) {
    Plan *p = plan_build(t);
    if (!p) return NULL;
    PyObject *capsule = PyCapsule_New(p, "krpc.plan", capsule_free);
    if (!capsule) plan_free(p);
    return capsule;
}

static Plan *plan_of(PyObject *capsule) { return PyCapsule_GetPointer(capsule, "krpc.plan"); }

/* uuid.UUID without running UUID.__init__ in Python: set its two slots directly */
static PyObject *make_uuid(const unsigned char *q) {
    PyObject *number = _PyLong_FromByteArray(q, 16, 0, 0);
    if (!number) return NULL;
    PyTypeObject *type = (PyTypeObject *)UUID_type;
    PyObject *u = type->tp_alloc(type, 0);
    if (!u || PyObject_GenericSetAttr(u, s_int, number) < 0 || PyObject_GenericSetAttr(u, s_is_safe, SafeUnknown) < 0) {
        Py_DECREF(number);
        Py_XDECREF(u);
        return NULL;
    }
    Py_DECREF(number);
    return u;
}

/* ---------------------------------------------------------------------------------- decode */

typedef struct { PyObject *obj; const unsigned char *p; Py_ssize_t n; } In;

static int uvarint(In *in, Py_ssize_t *pos, uint64_t *out) {
    uint64_t v = 0;
    for (int i = 0, shift = 0; i < 5; i++, shift += 7) {
        if (*pos >= in->n) return -1;
        unsigned char b = in->p[(*pos)++];
        v |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80)) { if (v > 0xFFFFFFFFu) return -1; *out = v; return 0; }
    }
    return -1;
}

/* a length with null: compact uvarint(n + 1), classic signed 16/32 bits; *len = -1 means null */
static int read_len(In *in, Py_ssize_t *pos, int compact, int classic_width, Py_ssize_t *len) {
    if (compact) {
        uint64_t v;
        if (uvarint(in, pos, &v) < 0) return -1;
        *len = (Py_ssize_t)v - 1;
        return 0;
    }
    if (*pos + classic_width > in->n) return -1;
    const unsigned char *q = in->p + *pos;
    int64_t v = classic_width == 2 ? (int16_t)((q[0] << 8) | q[1])
                                   : (int32_t)(((uint32_t)q[0] << 24) | ((uint32_t)q[1] << 16) | ((uint32_t)q[2] << 8) | q[3]);
    *pos += classic_width;
    if (v < -1) return -1;
    *len = (Py_ssize_t)v;
    return 0;
}

static PyObject *int_at(const unsigned char *q, int code) {
    switch (code) {
    case 1: return PyLong_FromLong((int8_t)q[0]);
    case 2: return PyLong_FromLong((int16_t)((q[0] << 8) | q[1]));
    case 3: return PyLong_FromLong((int32_t)(((uint32_t)q[0] << 24) | ((uint32_t)q[1] << 16) | ((uint32_t)q[2] << 8) | q[3]));
    case 5: return PyLong_FromLong((q[0] << 8) | q[1]);
    case 6: return PyLong_FromUnsignedLong(((uint32_t)q[0] << 24) | ((uint32_t)q[1] << 16) | ((uint32_t)q[2] << 8) | q[3]);
    default: {
        uint64_t v = 0;
        for (int i = 0; i < 8; i++) v = (v << 8) | q[i];
        return PyLong_FromLongLong((int64_t)v);
    }
    }
}

static PyObject *dec_struct(In *in, Py_ssize_t *pos, Plan *plan);

static PyObject *dec_field(In *in, Py_ssize_t *pos, Field *F) {
    int kind = F->kind, compact = F->compact, nullable = F->nullable;
    Py_ssize_t len;
    switch (kind) {
    case K_INT: {
        int code = F->code;
        if (*pos + WIDTH[code] > in->n) return fallback();
        PyObject *v = int_at(in->p + *pos, code);
        *pos += WIDTH[code];
        return v;
    }
    case K_BOOL: {
        if (*pos >= in->n || in->p[*pos] > 1) return fallback();
        return PyBool_FromLong(in->p[(*pos)++]);
    }
    case K_FLOAT: {
        if (*pos + 8 > in->n) return fallback();
        double d = PyFloat_Unpack8((const char *)in->p + *pos, 0);
        *pos += 8;
        return PyFloat_FromDouble(d);
    }
    case K_UUID: {
        if (*pos + 16 > in->n) return fallback();
        PyObject *u = make_uuid(in->p + *pos);
        *pos += 16;
        return u;
    }
    case K_STRING: case K_BYTES: {
        if (read_len(in, pos, compact, kind == K_STRING ? 2 : 4, &len) < 0) return fallback();
        if (len < 0) { if (!nullable) return fallback(); Py_RETURN_NONE; }
        if ((kind == K_STRING && len > MAX_STRING) || len > in->n - *pos) return fallback();
        const char *s = (const char *)in->p + *pos;
        *pos += len;
        if (kind == K_BYTES) return PyBytes_FromStringAndSize(s, len);
        PyObject *u = PyUnicode_DecodeUTF8(s, len, "strict");
        if (!u) { PyErr_Clear(); return fallback(); }
        return u;
    }
    case K_INT_ARRAY: case K_STRUCT_ARRAY: {
        if (read_len(in, pos, compact, 4, &len) < 0) return fallback();
        if (len < 0) { if (!nullable) return fallback(); Py_RETURN_NONE; }
        if (len > in->n - *pos) return fallback();
        int code = F->code;
        if (kind == K_INT_ARRAY && len * WIDTH[code] > in->n - *pos) return fallback();
        PyObject *list = PyList_New(len);
        if (!list) return NULL;
        for (Py_ssize_t i = 0; i < len; i++) {
            PyObject *item;
            if (kind == K_INT_ARRAY) { item = int_at(in->p + *pos, code); *pos += WIDTH[code]; }
            else item = dec_struct(in, pos, F->sub);
            if (!item) { Py_DECREF(list); return NULL; }
            PyList_SET_ITEM(list, i, item);
        }
        return list;
    }
    case K_STRUCT: {
        if (nullable) {
            if (*pos >= in->n) return fallback();
            unsigned char marker = in->p[(*pos)++];
            if (marker == 0xFF) Py_RETURN_NONE;
            if (marker != 1) return fallback();
        }
        return dec_struct(in, pos, F->sub);
    }
    default: { /* a field only the Python closures handle: (decode, encode) */
        PyObject *r = PyObject_CallFunction(PyTuple_GET_ITEM(F->py, 0), "On", in->obj, *pos);
        if (!r) return NULL;
        if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 2) { Py_DECREF(r); return fallback(); }
        PyObject *v = PyTuple_GET_ITEM(r, 0);
        Py_ssize_t end = PyLong_AsSsize_t(PyTuple_GET_ITEM(r, 1));
        Py_INCREF(v);
        Py_DECREF(r);
        if (end < 0 && PyErr_Occurred()) { Py_DECREF(v); return NULL; }
        *pos = end;
        return v;
    }
    }
}

/* The tagged section, as StructPlan._decode_tagged reads it: each known tag's value and the unknown
   tags' (tag, bytes) list in wire order, then the default of every tagged field absent from the
   wire. Every irregularity declines to Python, which reports it precisely. */
static int dec_tagged(In *in, Py_ssize_t *pos, Plan *plan, PyObject *d) {
    uint64_t count, tag, size, seen = 0;
    int64_t previous = -1;
    PyObject *unknown = NULL;  /* the list of unknown tags, once there is one (also held by d) */
    if (uvarint(in, pos, &count) < 0 || count > (uint64_t)(in->n - *pos)) { fallback(); return -1; }
    for (uint64_t i = 0; i < count; i++) {
        if (uvarint(in, pos, &tag) < 0 || (int64_t)tag <= previous) { fallback(); goto error; }
        previous = (int64_t)tag;
        if (uvarint(in, pos, &size) < 0 || size > (uint64_t)(in->n - *pos)) { fallback(); goto error; }
        Py_ssize_t j = 0, end = *pos + (Py_ssize_t)size;
        while (j < plan->n_tagged && plan->tagged[j].tag != tag) j++;
        if (j == plan->n_tagged) {  /* a tag this version does not know: kept, as (tag, bytes) */
            if (!unknown && (!(unknown = PyList_New(0)) || PyDict_SetItem(d, s_unknown, unknown) < 0)) goto error;
            PyObject *item = Py_BuildValue("(Ky#)", (unsigned long long)tag, (const char *)in->p + *pos, (Py_ssize_t)size);
            if (!item || PyList_Append(unknown, item) < 0) { Py_XDECREF(item); goto error; }
            Py_DECREF(item);
            *pos = end;
            continue;
        }
        Field *F = &plan->tagged[j].field;
        In value_bytes = {in->obj, in->p, end};  /* the value must use exactly its size */
        PyObject *v = dec_field(&value_bytes, pos, F);
        if (!v) goto error;
        if (*pos != end) { Py_DECREF(v); fallback(); goto error; }
        int failed = _PyDict_SetItem_KnownHash(d, F->key, v, F->hash);
        Py_DECREF(v);
        if (failed < 0) goto error;
        seen |= (uint64_t)1 << j;
    }
    Py_XDECREF(unknown);
    for (Py_ssize_t j = 0; j < plan->n_tagged; j++) {
        if (seen & ((uint64_t)1 << j)) continue;
        Tagged *T = &plan->tagged[j];
        PyObject *v = T->factory == Py_None ? Py_NewRef(T->dflt) : PyObject_CallNoArgs(T->factory);
        if (!v) return -1;
        int failed = _PyDict_SetItem_KnownHash(d, T->field.key, v, T->field.hash);
        Py_DECREF(v);
        if (failed < 0) return -1;
    }
    return 0;
error:
    Py_XDECREF(unknown);
    return -1;
}

static PyObject *dec_struct(In *in, Py_ssize_t *pos, Plan *plan) {
    Py_ssize_t count = plan->n;
    PyObject *d = _PyDict_NewPresized(count + (plan->n_tagged > 0 ? plan->n_tagged : 1));  /* no resizing while the fields go in */
    if (!d) return NULL;
    for (Py_ssize_t i = 0; i < count; i++) {
        Field *F = &plan->fields[i];
        PyObject *v = dec_field(in, pos, F);
        if (!v || _PyDict_SetItem_KnownHash(d, F->key, v, F->hash) < 0) { Py_XDECREF(v); Py_DECREF(d); return NULL; }
        Py_DECREF(v);
    }
    if (plan->flexible) {  /* the tagged-field section */
        if (plan->n_tagged == 0 && *pos < in->n && in->p[*pos] == 0) {
            (*pos)++;
        } else if (plan->n_tagged >= 0) {
            if (dec_tagged(in, pos, plan, d) < 0) { Py_DECREF(d); return NULL; }
        } else {
            PyObject *r = PyObject_CallFunction(plan->tagged_decode, "OnO", in->obj, *pos, d);
            if (!r) { Py_DECREF(d); return NULL; }
            *pos = PyLong_AsSsize_t(r);
            Py_DECREF(r);
            if (*pos < 0 && PyErr_Occurred()) { Py_DECREF(d); return NULL; }
        }
    }
    return d;
}

static PyObject *decode_struct(PyObject *self, PyObject *args) {
    PyObject *capsule, *buf;
    Py_ssize_t pos;
    if (!PyArg_ParseTuple(args, "OSn", &capsule, &buf, &pos)) return NULL;
    Plan *plan = plan_of(capsule);
    if (!plan) return NULL;
    In in = {buf, (const unsigned char *)PyBytes_AS_STRING(buf), PyBytes_GET_SIZE(buf)};
    if (pos < 0 || pos > in.n) return fallback();
    PyObject *d = dec_struct(&in, &pos, plan);
    if (!d) return NULL;
    return Py_BuildValue("Nn", d, pos);
}

/* decode_message(plan, data: bytes) -> dict: a whole message; trailing bytes are the Python path's to report */
static PyObject *decode_message(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyBytes_CheckExact(args[1])) return fallback();
    Plan *plan = plan_of(args[0]);
    if (!plan) return NULL;
    In in = {args[1], (const unsigned char *)PyBytes_AS_STRING(args[1]), PyBytes_GET_SIZE(args[1])};
    Py_ssize_t pos = 0;
    PyObject *d = dec_struct(&in, &pos, plan);
    if (d && pos != in.n) { Py_DECREF(d); return fallback(); }
    return d;
}

/* ---------------------------------------------------------------------------------- encode */

typedef struct { char *p; Py_ssize_t n, cap; } Out;

static int grow(Out *o, Py_ssize_t more) {
    if (o->n + more <= o->cap) return 0;
    Py_ssize_t cap = o->cap ? o->cap : 256;
    while (cap < o->n + more) cap *= 2;
    char *p = PyMem_Realloc(o->p, cap);
    if (!p) { PyErr_NoMemory(); return -1; }
    o->p = p;
    o->cap = cap;
    return 0;
}

static int put(Out *o, const void *data, Py_ssize_t n) {
    if (grow(o, n) < 0) return -1;
    memcpy(o->p + o->n, data, n);
    o->n += n;
    return 0;
}

static int put_uvarint(Out *o, uint64_t v) {
    unsigned char b[10];
    int n = 0;
    while (v >= 0x80) { b[n++] = (unsigned char)((v & 0x7F) | 0x80); v >>= 7; }
    b[n++] = (unsigned char)v;
    return put(o, b, n);
}

static int put_be(Out *o, uint64_t v, int width) {
    unsigned char b[8];
    for (int i = width - 1; i >= 0; i--) { b[i] = (unsigned char)(v & 0xFF); v >>= 8; }
    return put(o, b, width);
}

static int put_len(Out *o, Py_ssize_t len, int compact, int classic_width) {
    if (compact) return put_uvarint(o, (uint64_t)(len + 1));
    if (classic_width == 2 && len > 0x7FFF) return -2;
    return put_be(o, (uint64_t)(int64_t)len, classic_width);
}

static const long long LOW[] = {0, -128, -32768, -2147483648LL, LLONG_MIN, 0, 0};
static const long long HIGH[] = {0, 127, 32767, 2147483647LL, LLONG_MAX, 65535, 4294967295LL};

static int put_int(Out *o, PyObject *v, int code) {
    if (!PyLong_CheckExact(v)) return -2;
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow || (x == -1 && PyErr_Occurred())) { PyErr_Clear(); return -2; }
    if (x < LOW[code] || x > HIGH[code]) return -2;
    return put_be(o, (uint64_t)x, WIDTH[code]);
}

static int enc_struct(Out *o, PyObject *value, Plan *plan);

/* returns 0, -1 (a Python error is set) or -2 (let the Python path decide) */
static int enc_field(Out *o, PyObject *v, Field *F) {
    int kind = F->kind, compact = F->compact, nullable = F->nullable;
    switch (kind) {
    case K_INT: return put_int(o, v, F->code);
    case K_BOOL: {
        if (v != Py_True && v != Py_False) return -2;
        unsigned char b = v == Py_True;
        return put(o, &b, 1);
    }
    case K_FLOAT: {
        double d;
        if (PyFloat_CheckExact(v)) d = PyFloat_AS_DOUBLE(v);
        else if (PyLong_CheckExact(v)) { d = PyLong_AsDouble(v); if (d == -1.0 && PyErr_Occurred()) { PyErr_Clear(); return -2; } }
        else return -2;
        if (grow(o, 8) < 0) return -1;
        if (PyFloat_Pack8(d, o->p + o->n, 0) < 0) return -1;
        o->n += 8;
        return 0;
    }
    case K_UUID: {
        if ((PyObject *)Py_TYPE(v) != UUID_type) return -2;
        PyObject *number = PyObject_GenericGetAttr(v, s_int);
        if (!number) { PyErr_Clear(); return -2; }
        if (grow(o, 16) < 0) { Py_DECREF(number); return -1; }
        int r = PyLong_CheckExact(number) ? _PyLong_AsByteArray((PyLongObject *)number, (unsigned char *)o->p + o->n, 16, 0, 0) : -1;
        Py_DECREF(number);
        if (r < 0) { PyErr_Clear(); return -2; }
        o->n += 16;
        return 0;
    }
    case K_STRING: case K_BYTES: {
        if (v == Py_None) return nullable ? put_len(o, -1, compact, kind == K_STRING ? 2 : 4) : -2;
        const char *s;
        Py_ssize_t n;
        if (kind == K_STRING) {
            if (!PyUnicode_CheckExact(v)) return -2;
            s = PyUnicode_AsUTF8AndSize(v, &n);
            if (!s) { PyErr_Clear(); return -2; }
            if (n > MAX_STRING) return -2;
        } else {
            if (!PyBytes_CheckExact(v)) return -2;
            s = PyBytes_AS_STRING(v);
            n = PyBytes_GET_SIZE(v);
        }
        int r = put_len(o, n, compact, kind == K_STRING ? 2 : 4);
        return r < 0 ? r : put(o, s, n);
    }
    case K_INT_ARRAY: case K_STRUCT_ARRAY: {
        if (v == Py_None) return nullable ? put_len(o, -1, compact, 4) : -2;
        if (!PyList_CheckExact(v)) return -2;
        Py_ssize_t n = PyList_GET_SIZE(v);
        int r = put_len(o, n, compact, 4);
        if (r < 0) return r;
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *item = PyList_GET_ITEM(v, i);
            r = kind == K_INT_ARRAY ? put_int(o, item, F->code) : enc_struct(o, item, F->sub);
            if (r < 0) return r;
        }
        return 0;
    }
    case K_STRUCT: {
        if (v == Py_None) {
            if (!nullable) return -2;
            unsigned char b = 0xFF;
            return put(o, &b, 1);
        }
        if (nullable) { unsigned char b = 1; if (put(o, &b, 1) < 0) return -1; }
        return enc_struct(o, v, F->sub);
    }
    default: { /* a field only the Python closures handle: (decode, encode) */
        PyObject *chunk = PyByteArray_FromStringAndSize(NULL, 0);
        if (!chunk) return -1;
        PyObject *r = PyObject_CallFunction(PyTuple_GET_ITEM(F->py, 1), "OO", v, chunk);
        if (!r) { Py_DECREF(chunk); PyErr_Clear(); return -2; }
        Py_DECREF(r);
        int rc = put(o, PyByteArray_AS_STRING(chunk), PyByteArray_GET_SIZE(chunk));
        Py_DECREF(chunk);
        return rc;
    }
    }
}

static int enc_struct(Out *o, PyObject *value, Plan *plan) {
    if (!PyDict_CheckExact(value)) return -2;
    Py_ssize_t size = PyDict_GET_SIZE(value);
    if (size != plan->n_regular) {  /* extra keys: tagged fields, or something for the Python path */
        PyObject *key, *item;
        Py_ssize_t it = 0;
        while (PyDict_Next(value, &it, &key, &item)) {
            int in = PySet_Contains(plan->known, key);
            if (in <= 0) { PyErr_Clear(); return -2; }
        }
    }
    for (Py_ssize_t i = 0; i < plan->n; i++) {
        Field *F = &plan->fields[i];
        PyObject *v = PyDict_GetItemWithError(value, F->key);
        if (!v) { PyErr_Clear(); return -2; }
        int r = enc_field(o, v, F);
        if (r < 0) return r;
    }
    if (plan->flexible) {
        if (plan->tagged_encode == Py_None) {
            if (size != plan->n_regular) return -2;  /* unknown tags: the Python path */
            unsigned char zero = 0;
            return put(o, &zero, 1);
        }
        PyObject *chunk = PyObject_CallFunctionObjArgs(plan->tagged_encode, value, NULL);
        if (!chunk) { PyErr_Clear(); return -2; }
        int r = PyBytes_Check(chunk) ? put(o, PyBytes_AS_STRING(chunk), PyBytes_GET_SIZE(chunk)) : -2;
        Py_DECREF(chunk);
        return r;
    }
    return 0;
}

static PyObject *encode_struct(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) return fallback();
    PyObject *value = args[1];
    Plan *plan = plan_of(args[0]);
    if (!plan) return NULL;
    Out o = {NULL, 0, 0};
    int r = enc_struct(&o, value, plan);
    PyObject *result = NULL;
    if (r == 0) result = PyBytes_FromStringAndSize(o.p ? o.p : "", o.n);
    else if (r == -2 || !PyErr_Occurred()) { PyErr_Clear(); PyErr_SetNone(Fallback); }
    PyMem_Free(o.p);
    return result;
}

static PyMethodDef methods[] = {
    {"decode_struct", decode_struct, METH_VARARGS, "decode_struct(plan, data: bytes, pos) -> (dict, end)"},
    {"decode_message", (PyCFunction)(void (*)(void))decode_message, METH_FASTCALL,
     "decode_message(plan, data: bytes) -> dict (the whole input)"},
    {"encode_struct", (PyCFunction)(void (*)(void))encode_struct, METH_FASTCALL, "encode_struct(plan, value) -> bytes"},
    {"compile_plan", compile_plan, METH_O, "compile_plan(plan tuple) -> capsule used by encode/decode"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_speedups",
    "Optional C accelerator for linter.codec; the pure-Python plans stay the reference.", -1, methods};

PyMODINIT_FUNC PyInit__speedups(void) {
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Fallback = PyErr_NewException("linter.codec._speedups.Fallback", NULL, NULL);
    PyObject *uuid = PyImport_ImportModule("uuid");
    if (!Fallback || !uuid) return NULL;
    UUID_type = PyObject_GetAttrString(uuid, "UUID");
    PyObject *safe = PyObject_GetAttrString(uuid, "SafeUUID");
    Py_DECREF(uuid);
    if (!safe) return NULL;
    SafeUnknown = PyObject_GetAttrString(safe, "unknown");
    Py_DECREF(safe);
    s_bytes = PyUnicode_InternFromString("bytes");
    s_int = PyUnicode_InternFromString("int");
    s_is_safe = PyUnicode_InternFromString("is_safe");
    empty_tuple = PyTuple_New(0);
    s_unknown = PyUnicode_InternFromString(UNKNOWN_TAGS);
    if (!UUID_type || !SafeUnknown || !s_bytes || !s_int || !s_is_safe || !empty_tuple || !s_unknown) return NULL;
    if (PyModule_AddStringConstant(m, "UNKNOWN_TAGS", UNKNOWN_TAGS) < 0) return NULL;
    Py_INCREF(Fallback);
    if (PyModule_AddObject(m, "Fallback", Fallback) < 0) return NULL;
    return m;
}
