/* The portable frame-pointer walk (core/stack/stack_walk.c) over hand-made stacks: a Swift async
 * frame record (saved fp with bit 60 set) is followed, not taken for the end of the stack; a
 * stack deeper than its copy keeps its top and says "truncated"; a record pointing down the
 * stack is "bad_frame". */
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
  printf("frame_walk: ok\n");
  return 0;
}
