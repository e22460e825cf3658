/* The portable frame-pointer walk (core/stack/stack_walk.c) over hand-made stacks: a Swift async
 * frame record (saved fp with bit 60 set) is followed, not taken for the end of the stack; a
 * stack deeper than its copy keeps its top and says "truncated"; a record pointing down the
 * stack is "bad_frame"; an async frame's task's logical callers come from its async contexts. */
#include "check.h"
#include "internal.h"

#include <string.h>

#define WORDS 64
#define ASYNC ((uintptr_t)1 << 60)

static uintptr_t stack[WORDS];

static uintptr_t at(int i) { return (uintptr_t)&stack[i]; }

/* A frame record at word i: the caller's fp, then the return address. */
static void record(int i, uintptr_t caller_fp, uintptr_t ret) {
  stack[i] = caller_fp;
  stack[i + 1] = ret;
}

static void walk(size_t words, int cut, uintptr_t fp, lagscope__stack *out) {
  lagscope__stack_copy copy = {(const uint8_t *)stack, at(0), words * sizeof(uintptr_t), cut, NULL};
  lagscope__walk_regs regs = {0x1000, 0, fp, 0};
  memset(out, 0, sizeof(*out));
  lagscope__stack_walk(&copy, &regs, out);
}

static void expect(const lagscope__stack *s, lagscope__walk walk, uint32_t depth,
                   const uintptr_t *frames) {
  CHECK_EQ_INT(s->walk, walk);
  CHECK_EQ_INT((int)s->depth, (int)depth);
  for (uint32_t i = 0; i < depth && i < s->depth; i++) CHECK(s->frames[i] == frames[i]);
}

/* A Swift task's async contexts, on a "heap" the checked read reaches (Swift's
 * include/swift/ABI/Task.h, AsyncContext: [0] Parent, [8] ResumeParent; followed as
 * stdlib/public/Backtracing/FramePointerUnwinder.swift's async mode does). */
static uintptr_t heap[16];

static int read_heap(uintptr_t address, uintptr_t *value) {
  if (address < (uintptr_t)heap || address >= (uintptr_t)(heap + 16) || address % 8 != 0)
    return -1;
  *value = *(const uintptr_t *)address;
  return 0;
}

static void context(int i, uintptr_t parent, uintptr_t resume) {
  heap[i] = parent;
  heap[i + 1] = resume;
}

/* Issue 33, risk 9: an async frame's logical callers, not only its physical ones. */
static void async_chain(void) {
  lagscope__stack s;
  memset(stack, 0, sizeof(stack));
  memset(heap, 0, sizeof(heap));
  /* B is async: its record's saved fp has bit 60 set and the word below the record (fp - 8)
   * holds its context, signed (pointer authentication bits above the address). */
  record(4, at(10), 0x1111);
  record(10, at(20) | ASYNC, 0x2222);
  stack[9] = (uintptr_t)&heap[0] | ((uintptr_t)0x2b << 48);
  record(20, 0, 0x3333);
  context(0, (uintptr_t)&heap[4], 0x7000); /* B's caller resumes at 0x7000 */
  context(4, (uintptr_t)&heap[8], 0x8000); /* its caller at 0x8000 */
  context(8, 0, 0);                        /* the task's first function: nobody to resume */
  walk(WORDS, 0, at(4), &s);
  const uintptr_t physical[] = {0x1000, 0x1111, 0x2222, 0x3333};
  expect(&s, LAGSCOPE__WALK_COMPLETE, 4, physical); /* the physical walk goes on, as before */
  CHECK(s.async_context == (uintptr_t)&heap[0]);
  lagscope__stack_walk_async(&s, read_heap, NULL);
  CHECK_EQ_INT((int)s.async_depth, 2);
  CHECK(s.async_frames[0] == 0x7000 && s.async_frames[1] == 0x8000);

  /* A context that is its own parent ends the chain after one frame. */
  context(0, (uintptr_t)&heap[0], 0x7000);
  lagscope__stack_walk_async(&s, read_heap, NULL);
  CHECK_EQ_INT((int)s.async_depth, 1);
  /* A freed context (unreadable parent) ends it where it can no longer be read. */
  context(0, 0x10, 0x7000);
  lagscope__stack_walk_async(&s, read_heap, NULL);
  CHECK_EQ_INT((int)s.async_depth, 1);
  /* No async frame: no context, no logical stack. */
  stack[10] = at(20);
  walk(WORDS, 0, at(4), &s);
  CHECK(s.async_context == 0);
  lagscope__stack_walk_async(&s, read_heap, NULL);
  CHECK_EQ_INT((int)s.async_depth, 0);
  /* A long chain stops at LAGSCOPE__MAX_ASYNC_FRAMES: a context whose parent is the next. */
  s.async_context = (uintptr_t)&heap[0];
  for (int i = 0; i < 16; i += 2) context(i, (uintptr_t)&heap[(i + 2) % 16], 0x9000 + (uintptr_t)i);
  lagscope__stack_walk_async(&s, read_heap, NULL);
  CHECK_EQ_INT((int)s.async_depth, LAGSCOPE__MAX_ASYNC_FRAMES);
}

int main(void) {
  lagscope__stack s;
  const uintptr_t all[] = {0x1000, 0x1111, 0x2222, 0x3333};

  /* An async frame in the middle: A -> (async) B -> C, the outermost. */
  memset(stack, 0, sizeof(stack));
  record(4, at(10) | ASYNC, 0x1111);
  record(10, at(20), 0x2222);
  record(20, 0, 0x3333);
  walk(WORDS, 0, at(4), &s);
  expect(&s, LAGSCOPE__WALK_COMPLETE, 4, all);

  /* The thread's own fp register marked async too. */
  walk(WORDS, 0, at(4) | ASYNC, &s);
  expect(&s, LAGSCOPE__WALK_COMPLETE, 4, all);

  /* Deeper than the copy: the copy ends before C's record, the stack goes on. */
  walk(16, 1, at(4), &s);
  expect(&s, LAGSCOPE__WALK_TRUNCATED, 3, all);

  /* The same end where the copy holds the whole stack: corrupt, not deep. */
  walk(16, 0, at(4), &s);
  expect(&s, LAGSCOPE__WALK_BAD_FRAME, 3, all);

  /* A record pointing back down the stack. */
  record(10, at(4), 0x2222);
  walk(WORDS, 0, at(4), &s);
  expect(&s, LAGSCOPE__WALK_BAD_FRAME, 3, all);

  CHECK(lagscope__stack_strip_async(at(4) | ASYNC) == at(4));
  async_chain();
  printf("frame_walk: ok\n");
  return 0;
}
