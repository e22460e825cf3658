/* Stacks of blocked threads, taken without a signal, agree with gdb. Six threads block in
 * nanosleep, read, poll, a mutex, a condition variable and epoll_wait under two functions of
 * their own (tests/integration/capture/victims.{c,cpp}: C and C++, built -O0 with frame
 * pointers and -O2 -fomit-frame-pointer). Each is captured while blocked (no signal: method
 * "blocked"), then gdb attaches to this very process and prints `thread apply all bt`; for
 * every thread the functions from the inner victim function outwards must be the same, in
 * order, and our walk must reach the outermost frame as gdb's does. */
#define _GNU_SOURCE
#include "check.h"
#include "internal.h"
#include "await_blocked.h"
#include "linux/linux.h"
#include "victims.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NAME_MAX_LEN 160
#define FRAMES_MAX 64

static _Atomic int32_t tids[VICTIM_KINDS];

static void *start(void *arg) {
  free(malloc(64)); /* this thread's malloc arena, before anyone waits for it to block */
  atomic_store(&tids[(intptr_t)arg], lagscope__thread_id());
  return victims_thread(arg);
}

/* A demangled name without its parameter list: "ns::C::f()" and gdb's "ns::C::f" agree. */
static void plain_name(const char *name, char *out) {
  snprintf(out, NAME_MAX_LEN, "%s", name != NULL ? name : "?");
  char *paren = strchr(out, '(');
  if (paren != NULL && paren != out) *paren = '\0';
}

typedef struct thread_stack {
  int32_t tid;
  size_t n;
  char names[FRAMES_MAX][NAME_MAX_LEN];
} thread_stack;

static void ours(lagscope__symbols *symbols, int32_t tid, thread_stack *out) {
  static lagscope__stack stack;
  int rc = lagscope__capture_stack(tid, &stack, 100000000u);
  CHECK_MSG(rc == 0, "tid %d: rc %d, walk %s", tid, rc, lagscope__walk_name(stack.walk));
  CHECK_MSG(stack.method == LAGSCOPE__METHOD_BLOCKED, "tid %d taken by %s, not blocked", tid,
            lagscope__method_name(stack.method));
  CHECK_MSG(stack.walk == LAGSCOPE__WALK_COMPLETE, "tid %d: walk %s", tid,
            lagscope__walk_name(stack.walk));
  out->tid = tid;
  out->n = 0;
  for (uint32_t i = 0; i < stack.depth && out->n < FRAMES_MAX; i++) {
    lagscope__stack_frame f;
    lagscope__symbols_resolve(symbols, stack.frames[i], i > 0, &f);
    plain_name(f.function, out->names[out->n++]);
  }
  printf("lagscope, tid %d (%s, %u scanned):", tid, lagscope__syscall_name(stack.syscall),
         stack.frames_scanned);
  for (size_t i = 0; i < out->n; i++) printf(" %s", out->names[i]);
  printf("\n");
}

/* Every thread's functions from gdb's `thread apply all bt` on this process. */
static size_t gdb_stacks(thread_stack *out, size_t max) {
  char command[256];
  snprintf(command, sizeof(command),
           "timeout 60 gdb -nx -batch -p %d -ex 'thread apply all bt' 2>/dev/null", getpid());
  FILE *gdb = popen(command, "r");
  CHECK(gdb != NULL);
  char line[4096];
  size_t count = 0;
  thread_stack *t = NULL;
  while (fgets(line, sizeof(line), gdb) != NULL) {
    char *lwp = strstr(line, "(LWP ");
    if (strncmp(line, "Thread ", 7) == 0 && lwp != NULL && count < max) {
      t = &out[count++];
      t->tid = atoi(lwp + 5);
      t->n = 0;
      continue;
    }
    if (t == NULL || line[0] != '#' || t->n == FRAMES_MAX) continue;
    /* "#3  0x... in name (args) at file:line" or "#0  name (args) at ..." */
    char *s = strstr(line, " in ");
    s = s != NULL ? s + 4 : strchr(line, ' ');
    while (*s == ' ') s++;
    size_t len = strcspn(s, " (");
    snprintf(t->names[t->n++], NAME_MAX_LEN, "%.*s", (int)len, s);
  }
  CHECK(pclose(gdb) != -1);
  return count;
}

static int find(const thread_stack *t, const char *name) {
  for (size_t i = 0; i < t->n; i++)
    if (strcmp(t->names[i], name) == 0) return (int)i;
  return -1;
}

int main(void) {
  if (system("command -v gdb >/dev/null 2>&1") != 0) {
    printf("gdb is not installed\n");
    return 77;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0); /* let gdb, our child, attach */
  victims_prepare();
  pthread_t threads[VICTIM_KINDS];
  for (intptr_t k = 0; k < VICTIM_KINDS; k++) { /* detached: the process exits under them */
    CHECK(pthread_create(&threads[k], NULL, start, (void *)k) == 0);
    pthread_detach(threads[k]);
  }
  for (int k = 0; k < VICTIM_KINDS; k++) {
    while (atomic_load(&tids[k]) == 0) usleep(1000);
    await_blocked(atomic_load(&tids[k]));
  }

  lagscope__symbols *symbols = lagscope__symbols_new();
  CHECK(symbols != NULL);
  static thread_stack mine[VICTIM_KINDS], theirs[VICTIM_KINDS + 8];
  for (int k = 0; k < VICTIM_KINDS; k++) ours(symbols, atomic_load(&tids[k]), &mine[k]);
  size_t gdb_n = gdb_stacks(theirs, VICTIM_KINDS + 8);

  for (int k = 0; k < VICTIM_KINDS; k++) {
    const thread_stack *g = NULL;
    for (size_t i = 0; i < gdb_n; i++)
      if (theirs[i].tid == mine[k].tid) g = &theirs[i];
    CHECK_MSG(g != NULL, "gdb did not show tid %d", mine[k].tid);
    printf("gdb,      tid %d:", g->tid);
    for (size_t i = 0; i < g->n; i++) printf(" %s", g->names[i]);
    printf("\n");
    const char *inner = victims_inner_name(k);
    int gi = find(g, inner), oi = find(&mine[k], inner);
    CHECK_MSG(gi >= 0 && oi >= 0, "tid %d: %s missing (gdb %d, lagscope %d)", g->tid, inner, gi,
              oi);
    /* From the inner function to the thread's start, gdb's frames and ours, one for one. */
    int gs = find(g, "start_thread"), os = find(&mine[k], "start_thread");
    CHECK_MSG(gs > gi && os > oi, "tid %d: start_thread missing (gdb %d, lagscope %d)", g->tid,
              gs, os);
    CHECK_MSG(gs - gi == os - oi, "tid %d: %d frames from %s to start_thread in gdb, %d here",
              g->tid, gs - gi, inner, os - oi);
    for (int i = 0; i <= gs - gi; i++)
      CHECK_MSG(strcmp(g->names[gi + i], mine[k].names[oi + i]) == 0,
                "tid %d, frame %d: gdb %s, lagscope %s", g->tid, i, g->names[gi + i],
                mine[k].names[oi + i]);
    CHECK(find(&mine[k], victims_outer_name(k)) == oi + 1);
  }
  lagscope__symbols_free(symbols);
  victims_release();
  printf("blocked stacks agree with gdb for %d threads\n", VICTIM_KINDS);
  _exit(0); /* the nanosleep thread sleeps on: no join */
}
