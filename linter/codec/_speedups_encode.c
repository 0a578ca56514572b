/* The encoding walk of the C accelerator (see _speedups.c): dict -> bytes; any value it is not
   sure about makes the Python path decide. */
#include "_speedups.h"

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
        if ((PyObject *)Py_TYPE(v) != krpc_UUID_type) return -2;
        PyObject *number = PyObject_GenericGetAttr(v, krpc_s_int);
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

PyObject *krpc_encode_struct(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) return krpc_fallback();
    PyObject *value = args[1];
    Plan *plan = krpc_plan_of(args[0]);
    if (!plan) return NULL;
    Out o = {NULL, 0, 0};
    int r = enc_struct(&o, value, plan);
    PyObject *result = NULL;
    if (r == 0) result = PyBytes_FromStringAndSize(o.p ? o.p : "", o.n);
    else if (r == -2 || !PyErr_Occurred()) { PyErr_Clear(); PyErr_SetNone(krpc_Fallback); }
    PyMem_Free(o.p);
    return result;
}
