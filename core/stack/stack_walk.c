/*
 * The frame-pointer walk over a copy of a stack (stack/stack.h, "stack walk"): portable, so that
 * the rules Apple's ABIs set are tested on Linux. The Darwin capture copies the stopped thread's
 * stack and walks the copy with this after the thread runs again.
 *
 * Rules: the chain of frame records ([fp] the caller's fp, [fp + 8] the return address) goes
 * up the stack, always; a saved fp with bit 60 set marks a Swift async frame record (the
 * concurrency runtime's extended frame): the bit is stripped and the walk goes on, as Apple's
 * backtracer does, rather than ending at an address no stack holds; a record above the copy of
 * a stack that goes on is "truncated" (deeper than we copied: the top is kept), elsewhere
 * "bad_frame".
 */
#include "internal.h"

#include <string.h>

#define ASYNC_FRAME_BIT ((uintptr_t)1 << 60) /* 64-bit targets only: the library is 64-bit */

uintptr_t lagscope__stack_strip_async(uintptr_t fp) {
  return sizeof(uintptr_t) == 8 ? fp & ~ASYNC_FRAME_BIT : fp;
}

static int within(uintptr_t address, size_t bytes, uintptr_t start, size_t len) {
  return address >= start && len >= bytes && address - start <= len - bytes;
}

static uintptr_t copy_word(const lagscope__stack_copy *c, uintptr_t address) {
  uintptr_t value;
  memcpy(&value, c->bytes + (address - c->base), sizeof(value));
  return value;
}

static uintptr_t strip(const lagscope__stack_copy *c, uintptr_t value) {
  return c->strip != NULL ? c->strip(value) : value;
}

static int push(lagscope__stack *out, uintptr_t frame) {
  if (out->depth == LAGSCOPE__MAX_STACK_FRAMES) {
    out->walk = LAGSCOPE__WALK_TRUNCATED;
    return 0;
  }
  out->frames[out->depth++] = frame;
  return 1;
}

/* The frame record at fp: 1 with the caller's fp (async bit stripped) and the return address;
 * 0 when fp is outside the copy (out->walk says why). */
static int read_record(const lagscope__stack_copy *c, uintptr_t fp, uintptr_t *caller_fp,
                       uintptr_t *ret, lagscope__stack *out) {
  if (fp % sizeof(uintptr_t) != 0 || !within(fp, 2 * sizeof(uintptr_t), c->base, c->len)) {
    /* Above the copy of a stack that goes on: deeper than we copied, not corrupt. */
    out->walk = c->cut && fp >= c->base + c->len ? LAGSCOPE__WALK_TRUNCATED
                                                  : LAGSCOPE__WALK_BAD_FRAME;
    return 0;
  }
  *caller_fp = lagscope__stack_strip_async(copy_word(c, fp));
  *ret = strip(c, copy_word(c, fp + sizeof(uintptr_t)));
  return 1;
}

void lagscope__stack_walk(const lagscope__stack_copy *c, const lagscope__walk_regs *r,
                          lagscope__stack *out) {
  out->depth = 0;
  out->walk = LAGSCOPE__WALK_BAD_FRAME;
  if (r->pc == 0) return;
  push(out, strip(c, r->pc));
  uintptr_t fp = lagscope__stack_strip_async(r->fp), caller_fp = 0, ret = 0;
  int have_record = fp != 0 && read_record(c, fp, &caller_fp, &ret, out);
  int unreadable = fp != 0 && !have_record; /* read_record said why in out->walk */
  uintptr_t lr = strip(c, r->lr);
  if (r->has_lr && lr != 0 && (!have_record || lr != ret) && !push(out, lr)) return;
  if (unreadable) return;
  while (have_record) {
    if (ret == 0) break;              /* the outermost record (thread_start, start) */
    if (!push(out, ret)) return;
    if (caller_fp == 0) break;
    if (caller_fp <= fp) {            /* records go up the stack, always */
      out->walk = LAGSCOPE__WALK_BAD_FRAME;
      return;
    }
    fp = caller_fp;
    if (!read_record(c, fp, &caller_fp, &ret, out)) return;
  }
  out->walk = LAGSCOPE__WALK_COMPLETE;
}
