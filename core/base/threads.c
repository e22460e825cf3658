/*
 * lagscope's threads: started with pthreads (the same on Linux and Darwin; each port names a
 * thread and gives its id), and which threads are lagscope's own: those it started and those it
 * adopted (civetweb's workers). Its own are never captured as the app's, their CPU is
 * lagscope's, and a call from one of them that would wait for lagscope's threads is refused.
 * The registry is a fixed array of thread ids claimed with compare-and-swap, and a thread-local
 * flag.
 */
#define _POSIX_C_SOURCE 200809L /* sigset_t, pthread_sigmask under -std=c11 */
#include "internal.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

/* Virtual size: only the pages touched cost memory. libdw reading line tables, under a
 * sanitizer, needs a deep stack (measured 2026-11: more than 256 KiB). */
#define THREAD_STACK_BYTES (1024u * 1024u)

static _Atomic int32_t own_tids[LAGSCOPE__OWN_THREADS_MAX];
static _Thread_local int this_thread_is_own;

int lagscope__thread_is_own(void) { return this_thread_is_own; }

int lagscope__thread_id_is_own(int32_t tid) {
  for (size_t i = 0; i < LAGSCOPE__OWN_THREADS_MAX; i++)
    if (atomic_load_explicit(&own_tids[i], memory_order_acquire) == tid) return 1;
  return 0;
}

size_t lagscope__thread_own_ids(int32_t *out, size_t max) {
  size_t n = 0;
  for (size_t i = 0; i < LAGSCOPE__OWN_THREADS_MAX && n < max; i++) {
    int32_t tid = atomic_load_explicit(&own_tids[i], memory_order_acquire);
    if (tid != 0) out[n++] = tid;
  }
  return n;
}

void lagscope__own_thread_enter(void) {
  int32_t tid = lagscope__thread_id();
  this_thread_is_own = 1;
  for (size_t i = 0; i < LAGSCOPE__OWN_THREADS_MAX; i++) {
    int32_t expected = 0;
    if (atomic_compare_exchange_strong(&own_tids[i], &expected, tid)) return;
  }
}

void lagscope__own_thread_leave(void) {
  int32_t tid = lagscope__thread_id();
  for (size_t i = 0; i < LAGSCOPE__OWN_THREADS_MAX; i++) {
    int32_t expected = tid;
    if (atomic_compare_exchange_strong(&own_tids[i], &expected, 0)) break;
  }
  this_thread_is_own = 0;
}

/* lagscope's threads take none of the app's signals: an app's handler must never run on a
 * thread the app does not know (the ports start their own threads with every signal blocked). */
void lagscope__thread_adopt(void) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, NULL);
  lagscope__own_thread_enter();
}

void lagscope__thread_disown(void) { lagscope__own_thread_leave(); }

/* ---- starting and joining ---- */

struct lagscope__thread {
  pthread_t handle;
  void (*fn)(void *);
  void *arg;
  char name[16];
};

static void *thread_trampoline(void *arg) {
  lagscope__thread *t = arg;
  lagscope__own_thread_enter();
  lagscope__thread_name_self(t->name);
  t->fn(t->arg);
  lagscope__own_thread_leave();
  return NULL;
}

int lagscope__thread_start(lagscope__thread **out, const char *name, void (*fn)(void *),
                           void *arg) {
  return lagscope__thread_start_sized(out, name, fn, arg, THREAD_STACK_BYTES);
}

int lagscope__thread_create(pthread_t *out, size_t stack_bytes, void *(*fn)(void *), void *arg) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, stack_bytes);
  /* Every signal blocked, inherited by the new thread: it never takes the app's. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int rc = pthread_create(out, &attr, fn, arg);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  pthread_attr_destroy(&attr);
  if (rc != 0) return rc == EAGAIN ? LAGSCOPE_ELIMIT : LAGSCOPE_ESYS;
  return LAGSCOPE_OK;
}

int lagscope__thread_start_sized(lagscope__thread **out, const char *name, void (*fn)(void *),
                                 void *arg, size_t stack_bytes) {
  lagscope__thread *t = lagscope__alloc(sizeof(*t));
  if (t == NULL) return LAGSCOPE_ENOMEM;
  t->fn = fn;
  t->arg = arg;
  strncpy(t->name, name, sizeof(t->name) - 1);
  int rc = lagscope__thread_create(&t->handle, stack_bytes, thread_trampoline, t);
  if (rc != LAGSCOPE_OK) {
    lagscope__dealloc(t);
    return rc;
  }
  *out = t;
  return LAGSCOPE_OK;
}

void lagscope__thread_join(lagscope__thread *t) {
  if (t == NULL) return;
  pthread_join(t->handle, NULL);
  lagscope__dealloc(t);
}
