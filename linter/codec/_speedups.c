/*
 * Optional accelerator for linter.codec: walks the same compiled plans as the pure-Python
 * closures (compiler.py), field by field, without the interpreter's per-value dispatch.
 *
 * It never decides anything the Python path would not: on any input it is not sure about
 * (a bad length, a type it does not handle, a value to check against a default, an error) it
 * raises the private Fallback exception and the caller re-runs the pure-Python plan, which is
 * the reference and produces the precise DecodeError/EncodeError with offset and path.
 *
 * This file holds the module globals, the plan building (plan tuple -> C structs, see
 * _speedups.h) and the method table; the walks are in _speedups_decode.c and _speedups_encode.c.
 */
#include "_speedups.h"

PyObject *krpc_Fallback = NULL;
PyObject *krpc_UUID_type = NULL;
static PyObject *s_bytes = NULL;
static PyObject *empty_tuple = NULL;

PyObject *krpc_SafeUnknown = NULL;
PyObject *krpc_s_int = NULL, *krpc_s_is_safe = NULL;
PyObject *krpc_s_unknown = NULL;

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

static void capsule_free(PyObject *capsule) { plan_free(PyCapsule_GetPointer(capsule, PLAN_CAPSULE)); }

static PyObject *compile_plan(PyObject *self, PyObject *t) {
    Plan *p = plan_build(t);
    if (!p) return NULL;
    PyObject *capsule = PyCapsule_New(p, PLAN_CAPSULE, capsule_free);
    if (!capsule) plan_free(p);
    return capsule;
}

static PyMethodDef methods[] = {
    {"decode_struct", krpc_decode_struct, METH_VARARGS, "decode_struct(plan, data: bytes, pos) -> (dict, end)"},
    {"decode_message", (PyCFunction)(void (*)(void))krpc_decode_message, METH_FASTCALL,
     "decode_message(plan, data: bytes) -> dict (the whole input)"},
    {"encode_struct", (PyCFunction)(void (*)(void))krpc_encode_struct, METH_FASTCALL, "encode_struct(plan, value) -> bytes"},
    {"compile_plan", compile_plan, METH_O, "compile_plan(plan tuple) -> capsule used by encode/decode"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_speedups",
    "Optional C accelerator for linter.codec; the pure-Python plans stay the reference.", -1, methods};

PyMODINIT_FUNC PyInit__speedups(void) {
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    krpc_Fallback = PyErr_NewException("linter.codec._speedups.Fallback", NULL, NULL);
    PyObject *uuid = PyImport_ImportModule("uuid");
    if (!krpc_Fallback || !uuid) return NULL;
    krpc_UUID_type = PyObject_GetAttrString(uuid, "UUID");
    PyObject *safe = PyObject_GetAttrString(uuid, "SafeUUID");
    Py_DECREF(uuid);
    if (!safe) return NULL;
    krpc_SafeUnknown = PyObject_GetAttrString(safe, "unknown");
    Py_DECREF(safe);
    s_bytes = PyUnicode_InternFromString("bytes");
    krpc_s_int = PyUnicode_InternFromString("int");
    krpc_s_is_safe = PyUnicode_InternFromString("is_safe");
    empty_tuple = PyTuple_New(0);
    krpc_s_unknown = PyUnicode_InternFromString(UNKNOWN_TAGS);
    if (!krpc_UUID_type || !krpc_SafeUnknown || !s_bytes || !krpc_s_int || !krpc_s_is_safe || !empty_tuple || !krpc_s_unknown) return NULL;
    if (PyModule_AddStringConstant(m, "UNKNOWN_TAGS", UNKNOWN_TAGS) < 0) return NULL;
    Py_INCREF(krpc_Fallback);
    if (PyModule_AddObject(m, "Fallback", krpc_Fallback) < 0) return NULL;
    return m;
}
