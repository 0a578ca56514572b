/*
 * What the three sources of the codec's C accelerator share (private: no other code includes it):
 *   _speedups.c         module globals, plan building (plan tuple -> C structs), the method table
 *   _speedups_decode.c  decode_struct, decode_message
 *   _speedups_encode.c  encode_struct
 *
 * Plans (built by StructPlan.native_plan):
 *   struct = (fields, flexible, tagged_decode, tagged_encode, known_keys, n_regular, tagged)
 *   field  = (key, kind, compact, nullable, extra)
 *   tagged = None (the Python tagged_decode reads the tagged section) or a tuple, ascending by
 *            tag, of (tag, field, default, factory): a missing tagged field gets factory() when
 *            factory is not None (a mutable default), else the shared immutable default
 */
#ifndef KRPC_SPEEDUPS_H
#define KRPC_SPEEDUPS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* Names shared between the files stay inside the .so (only PyInit__speedups is exported), and are
   reached without a GOT load, as the file-static globals they were. */
#if defined(__GNUC__) || defined(__clang__)
#define KRPC_INTERNAL __attribute__((visibility("hidden")))
#else
#define KRPC_INTERNAL
#endif

enum { K_PY = 0, K_INT = 1, K_BOOL = 2, K_FLOAT = 3, K_UUID = 4, K_STRING = 5, K_BYTES = 6,
       K_INT_ARRAY = 7, K_STRUCT_ARRAY = 8, K_STRUCT = 9 };
/* integer codes: 1 int8, 2 int16, 3 int32, 4 int64, 5 uint16, 6 uint32 */
static const int WIDTH[] = {0, 1, 2, 4, 8, 2, 4};
#define MAX_STRING 0x7FFF
#define UNKNOWN_TAGS "_unknownTaggedFields"
#define MAX_NATIVE_TAGS 64  /* the decoder marks the tags it has seen in one 64-bit word */
#define PLAN_CAPSULE "krpc.plan"

/* set once by PyInit__speedups (_speedups.c) */
extern KRPC_INTERNAL PyObject *krpc_Fallback;
extern KRPC_INTERNAL PyObject *krpc_UUID_type;
extern KRPC_INTERNAL PyObject *krpc_SafeUnknown;
extern KRPC_INTERNAL PyObject *krpc_s_int, *krpc_s_is_safe;
extern KRPC_INTERNAL PyObject *krpc_s_unknown;  /* compiler.UNKNOWN_TAGS; codec.py checks that they agree */

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

/* the C path declines: the caller re-runs the pure-Python plan */
static inline void *krpc_fallback(void) { PyErr_SetNone(krpc_Fallback); return NULL; }

static inline Plan *krpc_plan_of(PyObject *capsule) { return PyCapsule_GetPointer(capsule, PLAN_CAPSULE); }

/* the methods, registered in _speedups.c */
KRPC_INTERNAL PyObject *krpc_decode_struct(PyObject *self, PyObject *args);
KRPC_INTERNAL PyObject *krpc_decode_message(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
KRPC_INTERNAL PyObject *krpc_encode_struct(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

#endif
