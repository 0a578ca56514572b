/* The decoding walk of the C accelerator (see _speedups.c): bytes -> dict, declining to Python
   (krpc_fallback) on anything irregular. */
#include "_speedups.h"

/* uuid.UUID without running UUID.__init__ in Python: set its two slots directly */
static PyObject *make_uuid(const unsigned char *q) {
    PyObject *number = _PyLong_FromByteArray(q, 16, 0, 0);
    if (!number) return NULL;
    PyTypeObject *type = (PyTypeObject *)krpc_UUID_type;
    PyObject *u = type->tp_alloc(type, 0);
    if (!u || PyObject_GenericSetAttr(u, krpc_s_int, number) < 0 || PyObject_GenericSetAttr(u, krpc_s_is_safe, krpc_SafeUnknown) < 0) {
        Py_DECREF(number);
        Py_XDECREF(u);
        return NULL;
    }
    Py_DECREF(number);
    return u;
}

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
        if (*pos + WIDTH[code] > in->n) return krpc_fallback();
        PyObject *v = int_at(in->p + *pos, code);
        *pos += WIDTH[code];
        return v;
    }
    case K_BOOL: {
        if (*pos >= in->n || in->p[*pos] > 1) return krpc_fallback();
        return PyBool_FromLong(in->p[(*pos)++]);
    }
    case K_FLOAT: {
        if (*pos + 8 > in->n) return krpc_fallback();
        double d = PyFloat_Unpack8((const char *)in->p + *pos, 0);
        *pos += 8;
        return PyFloat_FromDouble(d);
    }
    case K_UUID: {
        if (*pos + 16 > in->n) return krpc_fallback();
        PyObject *u = make_uuid(in->p + *pos);
        *pos += 16;
        return u;
    }
    case K_STRING: case K_BYTES: {
        if (read_len(in, pos, compact, kind == K_STRING ? 2 : 4, &len) < 0) return krpc_fallback();
        if (len < 0) { if (!nullable) return krpc_fallback(); Py_RETURN_NONE; }
        if ((kind == K_STRING && len > MAX_STRING) || len > in->n - *pos) return krpc_fallback();
        const char *s = (const char *)in->p + *pos;
        *pos += len;
        if (kind == K_BYTES) return PyBytes_FromStringAndSize(s, len);
        PyObject *u = PyUnicode_DecodeUTF8(s, len, "strict");
        if (!u) { PyErr_Clear(); return krpc_fallback(); }
        return u;
    }
    case K_INT_ARRAY: case K_STRUCT_ARRAY: {
        if (read_len(in, pos, compact, 4, &len) < 0) return krpc_fallback();
        if (len < 0) { if (!nullable) return krpc_fallback(); Py_RETURN_NONE; }
        if (len > in->n - *pos) return krpc_fallback();
        int code = F->code;
        if (kind == K_INT_ARRAY && len * WIDTH[code] > in->n - *pos) return krpc_fallback();
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
            if (*pos >= in->n) return krpc_fallback();
            unsigned char marker = in->p[(*pos)++];
            if (marker == 0xFF) Py_RETURN_NONE;
            if (marker != 1) return krpc_fallback();
        }
        return dec_struct(in, pos, F->sub);
    }
    default: { /* a field only the Python closures handle: (decode, encode) */
        PyObject *r = PyObject_CallFunction(PyTuple_GET_ITEM(F->py, 0), "On", in->obj, *pos);
        if (!r) return NULL;
        if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 2) { Py_DECREF(r); return krpc_fallback(); }
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
    if (uvarint(in, pos, &count) < 0 || count > (uint64_t)(in->n - *pos)) { krpc_fallback(); return -1; }
    for (uint64_t i = 0; i < count; i++) {
        if (uvarint(in, pos, &tag) < 0 || (int64_t)tag <= previous) { krpc_fallback(); goto error; }
        previous = (int64_t)tag;
        if (uvarint(in, pos, &size) < 0 || size > (uint64_t)(in->n - *pos)) { krpc_fallback(); goto error; }
        Py_ssize_t j = 0, end = *pos + (Py_ssize_t)size;
        while (j < plan->n_tagged && plan->tagged[j].tag != tag) j++;
        if (j == plan->n_tagged) {  /* a tag this version does not know: kept, as (tag, bytes) */
            if (!unknown && (!(unknown = PyList_New(0)) || PyDict_SetItem(d, krpc_s_unknown, unknown) < 0)) goto error;
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
        if (*pos != end) { Py_DECREF(v); krpc_fallback(); goto error; }
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

PyObject *krpc_decode_struct(PyObject *self, PyObject *args) {
    PyObject *capsule, *buf;
    Py_ssize_t pos;
    if (!PyArg_ParseTuple(args, "OSn", &capsule, &buf, &pos)) return NULL;
    Plan *plan = krpc_plan_of(capsule);
    if (!plan) return NULL;
    In in = {buf, (const unsigned char *)PyBytes_AS_STRING(buf), PyBytes_GET_SIZE(buf)};
    if (pos < 0 || pos > in.n) return krpc_fallback();
    PyObject *d = dec_struct(&in, &pos, plan);
    if (!d) return NULL;
    return Py_BuildValue("Nn", d, pos);
}

/* decode_message(plan, data: bytes) -> dict: a whole message; trailing bytes are the Python path's to report */
PyObject *krpc_decode_message(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyBytes_CheckExact(args[1])) return krpc_fallback();
    Plan *plan = krpc_plan_of(args[0]);
    if (!plan) return NULL;
    In in = {args[1], (const unsigned char *)PyBytes_AS_STRING(args[1]), PyBytes_GET_SIZE(args[1])};
    Py_ssize_t pos = 0;
    PyObject *d = dec_struct(&in, &pos, plan);
    if (d && pos != in.n) { Py_DECREF(d); return krpc_fallback(); }
    return d;
}
