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
 * "bad_frame". That record's function is async: the word below it holds its async context,
 * kept in out->async_context for lagscope__stack_walk_async, which follows the task's logical
 * callers along the context chain (the physical frames above are the executor's).
 */
#include "internal.h"

#include <string.h>

#define ASYNC_FRAME_BIT ((uintptr_t)1 << 60) /* 64-bit targets only: the library is 64-bit */
/* A data pointer's address bits: Darwin's user space is below 2^47 on arm64 and x86_64; above
 * are pointer authentication and tag bits (Swift's backtracer strips them too). */
#define ASYNC_POINTER_MASK (((uintptr_t)1 << 47) - 1)

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

/* The innermost async frame's context: the word below its record (Swift's ABI keeps the async
 * context there, at fp - 8). Noted once, where the copy holds it. */
static void note_async_context(const lagscope__stack_copy *c, uintptr_t fp, uintptr_t saved_fp,
                               lagscope__stack *out) {
  if (out->async_context != 0 || (saved_fp & ASYNC_FRAME_BIT) == 0 || sizeof(uintptr_t) != 8 ||
      fp < sizeof(uintptr_t) || !within(fp - sizeof(uintptr_t), sizeof(uintptr_t), c->base, c->len))
    return;
  out->async_context = copy_word(c, fp - sizeof(uintptr_t)) & ASYNC_POINTER_MASK;
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
  uintptr_t saved_fp = copy_word(c, fp);
  note_async_context(c, fp, saved_fp, out);
  *caller_fp = lagscope__stack_strip_async(saved_fp);
  *ret = strip(c, copy_word(c, fp + sizeof(uintptr_t)));
  return 1;
}

void lagscope__stack_walk(const lagscope__stack_copy *c, const lagscope__walk_regs *r,
                          lagscope__stack *out) {
  out->depth = 0;
  out->async_context = 0, out->async_depth = 0;
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

void lagscope__stack_walk_async(lagscope__stack *out, lagscope__read_word_fn read_word,
                                uintptr_t (*strip)(uintptr_t)) {
  out->async_depth = 0;
  uintptr_t context = out->async_context, parent, resume;
  while (context != 0 && out->async_depth < LAGSCOPE__MAX_ASYNC_FRAMES) {
    if (context % sizeof(uintptr_t) != 0 || read_word(context, &parent) != 0 ||
        read_word(context + sizeof(uintptr_t), &resume) != 0)
      return;
    resume = strip != NULL ? strip(resume) : resume;
    if (resume == 0) return; /* the task's first context: nobody to resume */
    out->async_frames[out->async_depth++] = resume;
    parent &= ASYNC_POINTER_MASK;
    if (parent == context) return; /* a context that is its own parent: garbage */
    context = parent;
  }
}
