/*
 * Capturing a thread's stack: the half both ports share. The stack's record is reset, and
 * lagscope's own threads and the caller are refused (the caller could neither answer a signal
 * nor be suspended by itself); the port (core/linux/capture.c, core/darwin/capture.c) then takes
 * the stack through lagscope__capture_take.
 */
#include "internal.h"

#include <stddef.h>
#include <string.h>

static void reset(int32_t tid, lagscope__stack *out) {
  memset(out, 0, offsetof(lagscope__stack, frames));
  out->tid = tid;
  out->syscall = -1;
  out->time_ns = lagscope__now_ns();
}

static int refused(int32_t tid) {
  return lagscope__thread_id_is_own(tid) || tid == lagscope__thread_id();
}

int lagscope__capture_stack(int32_t tid, lagscope__stack *out, uint64_t timeout_ns) {
  reset(tid, out);
  if (refused(tid)) {
    out->walk = LAGSCOPE__WALK_OWN;
    out->done_ns = out->time_ns;
    return LAGSCOPE_EINVAL;
  }
  int rc = lagscope__capture_take(tid, out, timeout_ns);
  out->done_ns = lagscope__now_ns();
  return rc;
}

int lagscope__capture_raw(int32_t tid, uint64_t timeout_ns, int *method) {
  static lagscope__stack scratch; /* one capture at a time per process */
  *method = LAGSCOPE__METHOD_NONE;
  if (refused(tid)) return LAGSCOPE_EINVAL;
  reset(tid, &scratch);
  return lagscope__capture_take_raw(tid, timeout_ns, &scratch, method);
}
