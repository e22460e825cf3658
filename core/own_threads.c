/*
 * Which threads are lagscope's own: those it started (each port's thread start) and those it
 * adopted (civetweb's workers). They are never captured as the app's, their CPU is lagscope's,
 * and a call from one of them that would wait for lagscope's threads is refused. Portable: a
 * fixed array of thread ids claimed with compare-and-swap, and a thread-local flag.
 */
#define _POSIX_C_SOURCE 200809L /* sigset_t, pthread_sigmask under -std=c11 */
#include "internal.h"

#include <pthread.h>
#include <signal.h>

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
