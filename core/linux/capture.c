/* Capture on Linux: filled in next. */
#define _GNU_SOURCE
#include "../internal.h"

#include <unistd.h>

const char *lagscope__walk_name(int walk) {
  switch (walk) {
    case LAGSCOPE__WALK_COMPLETE: return "complete";
    case LAGSCOPE__WALK_TRUNCATED: return "truncated";
    case LAGSCOPE__WALK_BAD_FRAME: return "bad_frame";
    case LAGSCOPE__WALK_NO_REPLY: return "no_reply";
    case LAGSCOPE__WALK_EXITED: return "exited";
    case LAGSCOPE__WALK_OWN: return "own";
  }
  return "unknown";
}

int lagscope__capture_init(void) { return 0; }
int32_t lagscope__main_thread_id(void) { return (int32_t)getpid(); }
int lagscope__capture_stack(int32_t tid, lagscope__stack *out, uint64_t timeout_ns) {
  (void)timeout_ns;
  out->tid = tid;
  out->depth = 0;
  out->walk = LAGSCOPE__WALK_NO_REPLY;
  return LAGSCOPE_ENOENT;
}
