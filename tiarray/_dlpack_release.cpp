// tiarray's DLPack deleter and capsule destructor (tiarray/_dlpack.py), natively.
//
// A consumer calls an export's deleter when it frees its array, and CPython calls a
// capsule's destructor when an unconsumed capsule dies. Both often happen while an
// exception is propagating (`np.from_dlpack(x)[10]` frees the temporary array during the
// IndexError). A ctypes callback cannot run then: CPython finds the pending exception when
// the Python function returns, raises SystemError, reports it as unraisable and clears the
// indicator, so the consumer's exception was lost ("error return without exception set")
// and the export never released. These two functions save the pending exception, call
// tiarray's Python release with the address, and restore the exception, as C destructors
// in CPython do.
//
// No Python headers: the C API functions arrive as addresses from ctypes.pythonapi
// (tiarray_dlpack_init), so the build needs only a C++ compiler.

#include <cstdint>

extern "C" {

typedef int (*IsFinalizingFn)(void);
typedef int (*GilEnsureFn)(void);  // PyGILState_STATE is an int-sized enum
typedef void (*GilReleaseFn)(int);
typedef void (*FetchFn)(void **, void **, void **);
typedef void (*RestoreFn)(void *, void *, void *);
typedef void *(*FromVoidPtrFn)(void *);
typedef void *(*CallFn)(void *, ...);  // PyObject_CallFunctionObjArgs(callable, ..., NULL)
typedef void (*DecRefFn)(void *);
typedef void (*UnraisableFn)(void *);

static IsFinalizingFn g_finalizing = nullptr;
static GilEnsureFn g_ensure = nullptr;
static GilReleaseFn g_release_gil = nullptr;
static FetchFn g_fetch = nullptr;
static RestoreFn g_restore = nullptr;
static FromVoidPtrFn g_from_ptr = nullptr;
static CallFn g_call = nullptr;
static DecRefFn g_decref = nullptr;
static UnraisableFn g_unraisable = nullptr;
static void *g_release = nullptr;   // Python callable(address of a managed tensor)
static void *g_capsule = nullptr;   // Python callable(address of a dying capsule)

// api: the addresses of _Py_IsFinalizing (or Py_IsFinalizing), PyGILState_Ensure,
// PyGILState_Release, PyErr_Fetch, PyErr_Restore, PyLong_FromVoidPtr,
// PyObject_CallFunctionObjArgs, Py_DecRef, PyErr_WriteUnraisable. The two callables are
// borrowed: the caller keeps them alive for the life of the process.
int tiarray_dlpack_init(const uint64_t *api, void *release, void *capsule) {
  for (int i = 0; i < 9; ++i)
    if (!api[i]) return 1;
  if (!release || !capsule) return 1;
  g_finalizing = reinterpret_cast<IsFinalizingFn>(api[0]);
  g_ensure = reinterpret_cast<GilEnsureFn>(api[1]);
  g_release_gil = reinterpret_cast<GilReleaseFn>(api[2]);
  g_fetch = reinterpret_cast<FetchFn>(api[3]);
  g_restore = reinterpret_cast<RestoreFn>(api[4]);
  g_from_ptr = reinterpret_cast<FromVoidPtrFn>(api[5]);
  g_call = reinterpret_cast<CallFn>(api[6]);
  g_decref = reinterpret_cast<DecRefFn>(api[7]);
  g_unraisable = reinterpret_cast<UnraisableFn>(api[8]);
  g_release = release;
  g_capsule = capsule;
  return 0;
}

static void call_saving_exception(void *callable, void *address) {
  if (!callable || !address) return;
  if (g_finalizing()) return;  // the exported memory goes with the process
  const int gil = g_ensure();  // consumers may free on any thread, with or without the GIL
  void *type = nullptr, *value = nullptr, *tb = nullptr;
  g_fetch(&type, &value, &tb);
  void *arg = g_from_ptr(address);
  if (arg) {
    void *r = g_call(callable, arg, nullptr);
    if (r) g_decref(r);
    else g_unraisable(callable);  // reports and clears an error of the release itself
    g_decref(arg);
  } else {
    g_unraisable(callable);
  }
  g_restore(type, value, tb);
  g_release_gil(gil);
}

// DLManagedTensor(Versioned).deleter
void tiarray_dlpack_deleter(void *managed) { call_saving_exception(g_release, managed); }

// PyCapsule destructor of an exported capsule
void tiarray_dlpack_capsule_destructor(void *capsule) { call_saving_exception(g_capsule, capsule); }

}  // extern "C"
