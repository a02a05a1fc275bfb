// tiarray's native XLA FFI handler for Taichi kernels on the CPU.
//
// The Python handler (_xla_ffi.make_handler) costs 5-10 us per call inside jax.jit: taking
// the GIL, reading the call frame, setting the launch arguments, Taichi's pybind launch.
// This handler does the same work without Python for the calls it has seen before:
//
//   1. answer XLA's metadata query (API version), ignore every stage but EXECUTE;
//   2. find the record of the call (the int64 attribute ``tiarray_id``) in a table that
//      Python fills (_native.py): argument kinds, outputs to zero-fill, the CPU variant
//      rule, and per variant the Taichi program, the compiled kernel and a launch context
//      prepared by Python, with the addresses where that context keeps each argument
//      (an array's data pointer, a scalar's bytes);
//   3. choose the variant (serial or parallel) by the record's rule, which the Python
//      policy computes the same way (_variant_rule.py);
//   4. take tiarray's launch lock (the same lock object the Python launches take), write
//      this call's buffer addresses and scalars into the context, zero-fill the outputs and
//      launch through Taichi's exported ``Program::launch_kernel``;
//   5. or, once a variant has been launched that way, call its compiled task functions
//      directly (see "Direct launches" below): Taichi's launch costs ~1.2 us of C++
//      bookkeeping per call (perf: dynamic_casts, std::vector<int>-keyed map lookups,
//      malloc/free), for kernels whose work is often less.
//
// Anything else -- a record Python has not prepared, a rule the table cannot express, the
// reverse mode, debug mode -- is handed to the Python handler (``fallback``). So the native
// path only repeats launches Python has set up, with this call's arguments.
//
// Call frame layout: see _xla_ffi.py (LP64). Compiled at first use by _native.py and
// checked in a subprocess before a process uses it.

#include <cstdint>
#include <cstring>
#include <atomic>
#include <exception>

namespace {

constexpr int kMaxParams = 64;
constexpr int kMaxRecords = 1 << 16;

typedef void (*LaunchFn)(void *prog, const void *compiled, void *ctx);
typedef void *(*HandlerFn)(void *frame);
typedef int (*LockAcquireFn)(void *lock, int wait);  // PyThread_acquire_lock
typedef void (*LockReleaseFn)(void *lock);           // PyThread_release_lock
typedef void *(*ErrorCreateFn)(void *args);
typedef void (*TaskFn)(void *runtime_context);

constexpr int kMaxTasks = 16;

struct Variant {
  void *prog;
  void *compiled;
  void *ctx;                     // the launch context (Taichi's LaunchContextBuilder)
  uint64_t slot[kMaxParams];     // per argument, then per result: where ctx keeps it
  uint64_t zero_nb[kMaxParams];  // per result: bytes to zero-fill before the launch
  // direct launches (see below)
  void *impl;                    // Taichi's ProgramImpl
  uint64_t rc, buf, buf_size;    // ctx's RuntimeContext, its argument buffer and its size
  int direct;                    // 0: not yet known, 1: call `tasks`, -1: always Taichi's launch
  int tries;                     // discoveries that found no unique layout
  int n_tasks;
  TaskFn tasks[kMaxTasks];
  uint64_t at[kMaxParams];       // per array: where the argument buffer holds its data pointer
};

struct Record {
  std::atomic<int> ready;  // 0: hand every call to Python
  int n_args, n_rets, n_scratch_from;  // results from n_scratch_from on are scratch
  uint8_t arg_array[kMaxParams];  // 1: a buffer, 0: a host scalar
  uint8_t arg_size[kMaxParams];   // a scalar's bytes
  // variant rule: serial when pre < threshold, else parallel when
  // work * (nonzero fraction of argument `index`, 1 without one) >= threshold
  int has_rule;
  int fixed_serial;  // the variant without a rule (1 serial)
  double pre, work;
  int index;     // -1: no counting
  int by_value;  // 0: the nonzero fraction of argument `index`; 1: its value (an integer count)
  int which;     // threshold index
  char kind;     // the argument's dtype kind: b i u f c
  int itemsize;
  int64_t count_n;  // its elements
  Variant v[2];  // [0] parallel, [1] serial
};

std::atomic<Record *> g_records[kMaxRecords];
std::atomic<int> g_enabled{0};
std::atomic<int64_t> g_hits{0}, g_misses{0}, g_errors{0}, g_serial{0}, g_direct{0};
LaunchFn g_launch = nullptr;
HandlerFn g_fallback = nullptr;
void *g_lock = nullptr;  // the PyThread_type_lock inside tiarray's launch lock (an RLock)
LockAcquireFn g_acquire = nullptr;
LockReleaseFn g_release = nullptr;
const int64_t *g_thresholds = nullptr;
int g_api_major = 0, g_api_minor = 0;
int64_t g_error_create_offset = 0;

inline uint64_t rd64(uint64_t addr) { return *reinterpret_cast<const uint64_t *>(addr); }
inline int32_t rd32(uint64_t addr) { return *reinterpret_cast<const int32_t *>(addr); }

void lock() { g_acquire(g_lock, 1); }

void unlock() { g_release(g_lock); }

// Nonzero elements of q[0, n) whose bits under `mask` are not all zero, counted in blocks
// whose count fits an unsigned T, so that the compiler vectorises the inner loop: 40 000
// bool events took 6.2 us with one int64 count (a scalar loop), 1.4 us in blocks of 255 (g++
// -O3, /tmp benchmark on this machine class).
template <typename U, typename T>
__attribute__((noinline)) int64_t count_masked(const U *q, int64_t n, U mask) {
  // noinline and a counted inner loop: inlined into the handler, g++ left the loop scalar
  const uint64_t most = (T)~(T)0;  // the largest count a T holds
  const int64_t block = most > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)most;
  int64_t c = 0;
  for (int64_t i = 0; i < n; i += block) {
    const int64_t len = n - i < block ? n - i : block;
    const U *b = q + i;
    T part = 0;
    for (int64_t j = 0; j < len; ++j) part += (T)((b[j] & mask) != 0);
    c += part;
  }
  return c;
}

// Nonzero elements as np.count_nonzero counts them: -0.0 is zero, NaN is not.
int64_t count_nonzero(uint64_t p, char kind, int itemsize, int64_t n) {
  if (kind == 'c') {
    // complex: either part nonzero (a float is nonzero when any bit but the sign is set)
    const int fs = itemsize / 2;
    int64_t c = 0;
    for (int64_t i = 0; i < n; ++i) {
      bool nz = false;
      for (int k = 0; k < 2; ++k) {
        uint64_t a = p + (uint64_t)(i * itemsize + k * fs);
        if (fs == 8) nz |= (rd64(a) & 0x7fffffffffffffffull) != 0;
        else if (fs == 4) nz |= (*reinterpret_cast<const uint32_t *>(a) & 0x7fffffffu) != 0;
        else nz |= (*reinterpret_cast<const uint16_t *>(a) & 0x7fffu) != 0;
      }
      c += nz;
    }
    return c;
  }
  const bool f = kind == 'f';
  switch (itemsize) {
    case 1:
      return count_masked<uint8_t, uint8_t>(reinterpret_cast<const uint8_t *>(p), n, 0xffu);
    case 2:
      return count_masked<uint16_t, uint16_t>(reinterpret_cast<const uint16_t *>(p), n, f ? 0x7fffu : 0xffffu);
    case 4:
      return count_masked<uint32_t, uint32_t>(reinterpret_cast<const uint32_t *>(p), n,
                                              f ? 0x7fffffffu : 0xffffffffu);
    default:
      return count_masked<uint64_t, uint64_t>(reinterpret_cast<const uint64_t *>(p), n,
                                              f ? 0x7fffffffffffffffull : ~0ull);
  }
}

// An integer count (a 0-d argument of kind i or u), negative counts as 0.
int64_t read_count(uint64_t p, char kind, int itemsize) {
  int64_t v;
  if (kind == 'u') {
    uint64_t u = itemsize == 1 ? *reinterpret_cast<const uint8_t *>(p)
                 : itemsize == 2 ? *reinterpret_cast<const uint16_t *>(p)
                 : itemsize == 4 ? *reinterpret_cast<const uint32_t *>(p)
                                 : rd64(p);
    v = u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)u;
  } else {
    v = itemsize == 1 ? *reinterpret_cast<const int8_t *>(p)
        : itemsize == 2 ? *reinterpret_cast<const int16_t *>(p)
        : itemsize == 4 ? *reinterpret_cast<const int32_t *>(p)
                        : (int64_t)rd64(p);
  }
  return v < 0 ? 0 : v;
}

int choose_serial(const Record *r, const uint64_t *args) {
  if (!r->has_rule) return r->fixed_serial;
  const double thr = (double)g_thresholds[r->which];
  if (r->pre < thr) return 1;
  double w = r->work;
  if (r->index >= 0) {
    const uint64_t data = rd64(args[r->index] + 24);
    if (r->by_value) {
      w = r->work * (double)read_count(data, r->kind, r->itemsize);
    } else {
      const double frac = r->count_n ? (double)count_nonzero(data, r->kind, r->itemsize, r->count_n) /
                                           (double)r->count_n
                                     : 0.0;
      w = r->work * frac;
    }
  }
  return w < thr ? 1 : 0;
}

void *make_error(uint64_t api, const char *msg) {
  struct {
    size_t struct_size;
    void *extension_start;
    const char *message;
    int errc;
  } a = {sizeof(a), nullptr, msg, 13 /* INTERNAL */};
  ErrorCreateFn f = reinterpret_cast<ErrorCreateFn>(rd64(api + (uint64_t)g_error_create_offset));
  return f(&a);
}

// ---------------------------------------------------------------------------------------
// Direct launches. On the CPU, Taichi 1.7's launch (cpu::KernelLauncher::launch_llvm_kernel,
// taichi/runtime/cpu/kernel_launcher.cpp) sets the RuntimeContext's runtime pointer, copies
// each external array's data pointer from the context's array_ptrs map into the argument
// buffer, then calls the kernel's task functions void(RuntimeContext*) in order; nothing
// after (no synchronisation: a parallel task dispatches to the thread pool itself and
// returns when it is done). After one such launch of a context, the runtime pointer and
// every other argument stay in place; so repeating the launch is writing this call's data
// pointers into the argument buffer and calling the tasks.
// The task functions are cached in the launcher (ProgramImpl +24 -> cpu::KernelLauncher,
// +24 -> std::vector<Context> contexts_, 48-byte entries starting with
// std::vector<TaskFn> task_funcs, indexed by the launch id the CompiledKernelData keeps in
// std::optional<int> at +8). Where each data pointer sits in the argument buffer is found
// after that launch: the one 8-byte word equal to the pointer just launched with (no
// unique word, e.g. one buffer passed twice: try again at a later call, 8 times).
// Every layout assumption is checked on the way; anything unexpected keeps Taichi's
// launch for the variant. Python checks a build against Taichi's launch in a subprocess
// before a process uses it (_native._probe).
constexpr int kMaxTries = 8;

bool find_tasks(Variant &v) {
  const uint64_t impl = reinterpret_cast<uint64_t>(v.impl);
  if (impl == 0) return false;
  const uint64_t launcher = rd64(impl + 24);
  if (launcher == 0 || launcher % 8) return false;
  const int32_t counter = rd32(launcher + 16);
  const uint64_t b = rd64(launcher + 24), e = rd64(launcher + 32);
  if (b == 0 || e < b || (e - b) % 48 || (int64_t)((e - b) / 48) != (int64_t)counter) return false;
  const uint64_t compiled = reinterpret_cast<uint64_t>(v.compiled);
  if (*reinterpret_cast<const uint8_t *>(compiled + 12) != 1) return false;  // no launch id yet
  const int32_t id = rd32(compiled + 8);
  if (id < 0 || id >= counter) return false;
  const uint64_t tb = rd64(b + 48 * (uint64_t)id), te = rd64(b + 48 * (uint64_t)id + 8);
  if (tb == 0 || te <= tb || (te - tb) % 8 || (te - tb) / 8 > (uint64_t)kMaxTasks) return false;
  v.n_tasks = (int)((te - tb) / 8);
  for (int k = 0; k < v.n_tasks; ++k) {
    v.tasks[k] = reinterpret_cast<TaskFn>(rd64(tb + 8 * (uint64_t)k));
    if (v.tasks[k] == nullptr) return false;
  }
  return true;
}

// After Taichi's launch of `v` with data pointers `ptr` (per parameter; scalars ignored).
void discover(const Record *r, Variant &v, const uint64_t *ptr) {
  const int n = r->n_args + r->n_rets;
  bool ok = v.rc && v.buf && v.buf_size && v.buf_size % 8 == 0 && rd64(v.rc) == v.buf &&
            rd64(v.rc + 8) != 0 /* the runtime, set by the launch */ && find_tasks(v);
  for (int p = 0; ok && p < n; ++p) {
    v.at[p] = 0;
    if (p < r->n_args && !r->arg_array[p]) continue;
    for (uint64_t o = 0; o < v.buf_size; o += 8) {
      if (rd64(v.buf + o) != ptr[p]) continue;
      if (v.at[p]) {  // a second word with this value: not unique
        ok = false;
        break;
      }
      v.at[p] = v.buf + o;
    }
    ok = ok && v.at[p] != 0;
  }
  if (ok) v.direct = 1;
  else if (++v.tries >= kMaxTries) v.direct = -1;
}

}  // namespace

extern "C" {

// The XLA FFI handler (XLA_FFI_Handler*).
void *tiarray_ffi_handler(void *frame_) {
  const uint64_t frame = reinterpret_cast<uint64_t>(frame_);
  uint64_t ext = rd64(frame + 8);
  while (ext) {  // the metadata query, at registration
    if (rd32(ext + 8) == 1 /* XLA_FFI_Extension_Metadata */) {
      const uint64_t md = rd64(ext + 24);
      *reinterpret_cast<int32_t *>(md + 24) = g_api_major;
      *reinterpret_cast<int32_t *>(md + 28) = g_api_minor;
      *reinterpret_cast<uint32_t *>(md + 32) = 0;  // traits
      return nullptr;
    }
    ext = rd64(ext + 16);
  }
  if (rd32(frame + 32) != 3 /* EXECUTE */) return nullptr;
  if (!g_enabled.load(std::memory_order_relaxed)) return g_fallback(frame_);
  const int64_t n_attrs = (int64_t)rd64(frame + 136);
  if (n_attrs < 1) return g_fallback(frame_);
  const int64_t rid = (int64_t)rd64(rd64(rd64(rd64(frame + 160)) + 8));
  if (rid < 0 || rid >= kMaxRecords) return g_fallback(frame_);
  Record *r = g_records[rid].load(std::memory_order_acquire);
  if (r == nullptr || !r->ready.load(std::memory_order_acquire)) return g_fallback(frame_);
  const int64_t n_args = (int64_t)rd64(frame + 56), n_rets = (int64_t)rd64(frame + 96);
  if (n_args != r->n_args || n_rets != r->n_rets) return g_fallback(frame_);
  const uint64_t *args = reinterpret_cast<const uint64_t *>(rd64(frame + 72));
  const uint64_t *rets = reinterpret_cast<const uint64_t *>(rd64(frame + 112));

  const uint64_t api = rd64(frame + 16);
  lock();
  const int serial = r->ready.load(std::memory_order_acquire) ? choose_serial(r, args) : 0;
  Variant &v = r->v[serial];
  if (!r->ready.load(std::memory_order_acquire) || v.ctx == nullptr) {  // cleared meanwhile
    unlock();
    g_misses.fetch_add(1, std::memory_order_relaxed);
    return g_fallback(frame_);
  }
  const bool direct = v.direct == 1;
  uint64_t ptr[kMaxParams];
  for (int i = 0; i < r->n_args; ++i) {
    const uint64_t d = rd64(args[i] + 24);
    ptr[i] = d;
    if (!r->arg_array[i])
      std::memcpy(reinterpret_cast<void *>(v.slot[i]), reinterpret_cast<const void *>(d), r->arg_size[i]);
    else if (direct)
      *reinterpret_cast<uint64_t *>(v.at[i]) = d;  // where the tasks read it
    else
      *reinterpret_cast<uint64_t *>(v.slot[i]) = d;  // where Taichi's launch reads it
  }
  for (int j = 0; j < r->n_rets; ++j) {
    uint64_t d = rd64(rets[j] + 24);
    if (j >= r->n_scratch_from && d == 0) d = 1;  // as the Python runner: no null pointers
    ptr[r->n_args + j] = d;
    *reinterpret_cast<uint64_t *>(direct ? v.at[r->n_args + j] : v.slot[r->n_args + j]) = d;
    if (v.zero_nb[j]) std::memset(reinterpret_cast<void *>(d), 0, v.zero_nb[j]);
  }
  void *err = nullptr;
  if (direct) {
    void *rc = reinterpret_cast<void *>(v.rc);
    for (int k = 0; k < v.n_tasks; ++k) v.tasks[k](rc);
    unlock();
    g_hits.fetch_add(1, std::memory_order_relaxed);
    g_direct.fetch_add(1, std::memory_order_relaxed);
    if (serial) g_serial.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  try {
    g_launch(v.prog, v.compiled, v.ctx);
    if (v.direct == 0) discover(r, v, ptr);
  } catch (const std::exception &e) {
    g_errors.fetch_add(1, std::memory_order_relaxed);
    err = make_error(api, e.what());
  } catch (...) {
    g_errors.fetch_add(1, std::memory_order_relaxed);
    err = make_error(api, "tiarray: Taichi's launch failed (an exception of unknown type)");
  }
  unlock();
  g_hits.fetch_add(1, std::memory_order_relaxed);
  if (serial) g_serial.fetch_add(1, std::memory_order_relaxed);
  return err;
}

// Set up: Taichi's launch function, the Python fallback handler, tiarray's launch lock, the
// policy thresholds, XLA's API version and where XLA_FFI_Error_Create sits in XLA_FFI_Api.
int tiarray_ffi_init(void *launch, void *fallback, void *lock_ptr, void *acquire, void *release,
                     const int64_t *thresholds, int api_major, int api_minor, int64_t error_create_offset) {
  g_launch = reinterpret_cast<LaunchFn>(launch);
  g_fallback = reinterpret_cast<HandlerFn>(fallback);
  g_lock = lock_ptr;
  g_acquire = reinterpret_cast<LockAcquireFn>(acquire);
  g_release = reinterpret_cast<LockReleaseFn>(release);
  g_thresholds = thresholds;
  g_api_major = api_major;
  g_api_minor = api_minor;
  g_error_create_offset = error_create_offset;
  return kMaxParams;
}

void tiarray_ffi_enable(int on) { g_enabled.store(on); }

// The functions below change the table: their caller holds tiarray's launch lock (the lock
// the handler takes), so that no launch reads what they change.

// Describe record `rid` (not ready until tiarray_ffi_ready). Returns 0, or -1 when the record
// cannot be handled natively (too many parameters).
int tiarray_ffi_set_record(int64_t rid, int n_args, int n_rets, int n_scratch_from,
                           const uint8_t *arg_array, const uint8_t *arg_size, int has_rule,
                           int fixed_serial, double pre, double work, int index, int by_value, int which,
                           char kind, int itemsize, int64_t count_n) {
  if (rid < 0 || rid >= kMaxRecords || n_args + n_rets > kMaxParams) return -1;
  Record *r = g_records[rid].load();
  if (r == nullptr) {
    r = new Record();
    std::memset(static_cast<void *>(r->v), 0, sizeof(r->v));
    g_records[rid].store(r, std::memory_order_release);
  }
  r->ready.store(0);
  r->n_args = n_args;
  r->n_rets = n_rets;
  r->n_scratch_from = n_scratch_from;
  std::memcpy(r->arg_array, arg_array, n_args);
  std::memcpy(r->arg_size, arg_size, n_args);
  r->has_rule = has_rule;
  r->fixed_serial = fixed_serial;
  r->pre = pre;
  r->work = work;
  r->index = index;
  r->by_value = by_value;
  r->which = which;
  r->kind = kind;
  r->itemsize = itemsize;
  r->count_n = count_n;
  for (auto &v : r->v) {
    v.prog = v.compiled = v.ctx = v.impl = nullptr;
    v.direct = -1;
  }
  return 0;
}

// One variant: the program, the compiled kernel, its launch context, where the context keeps
// each argument and result (``slot``), and the bytes to zero per result.
// `impl`, `rc`, `buf`, `buf_size` (Taichi's ProgramImpl, ctx's RuntimeContext and argument
// buffer) are for direct launches: 0 keeps Taichi's launch.
void tiarray_ffi_set_variant(int64_t rid, int serial, void *prog, void *compiled, void *ctx, const uint64_t *slot,
                             const uint64_t *zero_nb, void *impl, uint64_t rc, uint64_t buf, uint64_t buf_size) {
  Record *r = g_records[rid].load();
  Variant &v = r->v[serial];
  v.prog = prog;
  v.compiled = compiled;
  v.ctx = ctx;
  std::memcpy(v.slot, slot, sizeof(uint64_t) * (r->n_args + r->n_rets));
  std::memcpy(v.zero_nb, zero_nb, sizeof(uint64_t) * r->n_rets);
  v.impl = impl;
  v.rc = rc;
  v.buf = buf;
  v.buf_size = buf_size;
  v.direct = impl && rc && buf ? 0 : -1;
  v.tries = 0;
  v.n_tasks = 0;
}

void tiarray_ffi_ready(int64_t rid) { g_records[rid].load()->ready.store(1, std::memory_order_release); }

// Forget every record's program, kernels and contexts (the Taichi program is going away).
void tiarray_ffi_clear() {
  for (int i = 0; i < kMaxRecords; ++i) {
    Record *r = g_records[i].load();
    if (r == nullptr) continue;
    r->ready.store(0);
    for (auto &v : r->v) {
      v.prog = v.compiled = v.ctx = v.impl = nullptr;
      v.direct = -1;
    }
  }
}

void tiarray_ffi_stats(int64_t *out) {
  out[0] = g_hits.load();
  out[1] = g_misses.load();
  out[2] = g_errors.load();
  out[3] = g_serial.load();
  out[4] = g_direct.load();
}

// Probes for the install check: launch once through Taichi, take and release the lock.
void tiarray_ffi_probe_launch(void *prog, void *compiled, void *ctx) { g_launch(prog, compiled, ctx); }
void tiarray_ffi_probe_lock() { lock(); }
void tiarray_ffi_probe_unlock() { unlock(); }

}  // extern "C"
