/*
 * A recorder far behind never makes a stall vanish (issue 47 item 1). The recorder thread is
 * held inside its first report write (the store's test hook) while the main thread stalls
 * again and again: the watch ring fills, first with samples (thinned), then with the hangs'
 * starts and ends, then refuses. Once the recorder is let go, every stall must have been told:
 * as a hang, or inside a monitor_blind spell that covers it. Before the fix, the stalls whose
 * items the full ring refused were in neither (only an error event counted them).
 * Heartbeats, no post_main: the main thread is this test's own loop.
 */
#define _GNU_SOURCE
#include "check.h"
#include "internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NS_PER_MS 1000000ull
#define THRESHOLD_MS 100
#define STALL_MS 250
#define STALLS 16 /* more than the ring holds while the recorder is held */

typedef struct span {
  uint64_t start, end;
} span;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static span hangs[64], blind[64], stalls[STALLS + 1];
static int hangs_len, blind_len;
static _Atomic int hold, held;

/* The recorder's first report write waits here until the test lets it go (20 s at most). */
static int hold_write(const char *step, const char *temp, int fd) {
  (void)temp, (void)fd;
  if (strcmp(step, "create") != 0) return 0;
  for (int i = 0; atomic_load(&hold) && i < 20000; i++) {
    atomic_store(&held, 1);
    struct timespec pause = {0, NS_PER_MS};
    nanosleep(&pause, NULL);
  }
  return 0;
}

static void add(span *list, int *len, uint64_t start, uint64_t duration) {
  pthread_mutex_lock(&lock);
  if (*len < 64) list[(*len)++] = (span){start, start + duration};
  pthread_mutex_unlock(&lock);
}

static void on_event(const lagscope_event *e, void *user) {
  (void)user;
  if (e->type == LAGSCOPE_EVENT_HANG_ENDED)
    add(hangs, &hangs_len, e->as.hang_ended.start_ns, e->as.hang_ended.duration_ns);
  if (e->type == LAGSCOPE_EVENT_MONITOR_BLIND)
    add(blind, &blind_len, e->as.monitor_blind.start_ns, e->as.monitor_blind.duration_ns);
}

static void beat_for(uint64_t ms) {
  uint64_t until = lagscope__now_ns() + ms * NS_PER_MS;
  while (lagscope__now_ns() < until) {
    lagscope_heartbeat();
    struct timespec beat = {0, 10 * NS_PER_MS};
    nanosleep(&beat, NULL);
  }
}

static void stall(int i) {
  lagscope_heartbeat();
  stalls[i].start = lagscope__now_ns();
  struct timespec pause = {0, STALL_MS * NS_PER_MS};
  nanosleep(&pause, NULL);
  stalls[i].end = lagscope__now_ns();
  lagscope_heartbeat();
}

static uint64_t overlap(span a, span b) {
  uint64_t start = a.start > b.start ? a.start : b.start, end = a.end < b.end ? a.end : b.end;
  return end > start ? end - start : 0;
}

/* A stall is told when a hang of its own tells it (from its start to its end, give or take a
 * heartbeat: not one hang spread over several stalls, as an end the ring refused made), or
 * blind spells cover all of it but less than the threshold. */
static int told(span s) {
  uint64_t covered = 0, slack = 20 * NS_PER_MS;
  for (int i = 0; i < hangs_len; i++)
    if (hangs[i].start + slack >= s.start && hangs[i].end <= s.end + slack &&
        overlap(s, hangs[i]) > 0)
      return 1;
  for (int i = 0; i < blind_len; i++) covered += overlap(s, blind[i]);
  return covered + THRESHOLD_MS * NS_PER_MS >= s.end - s.start;
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  char root[] = "/tmp/lagscope-behind-XXXXXX", command[64];
  CHECK(mkdtemp(root) != NULL);
  lagscope__store_test_hook(hold_write);
  lagscope_config c = lagscope_config_default();
  c.report_dir = root;
  c.server = 0;
  c.hud = 0;
  c.hang_threshold_ms = THRESHOLD_MS;
  c.on_event = on_event;
  CHECK_EQ_INT(lagscope_start(&c), 0);
  beat_for(300);
  atomic_store(&hold, 1);
  stall(0); /* its report's first write holds the recorder */
  for (int ms = 0; !atomic_load(&held); ms += 10) {
    CHECK_MSG(ms < 10000, "the recorder never wrote the first hang's report");
    beat_for(10);
  }
  for (int i = 1; i <= STALLS; i++) {
    stall(i);
    beat_for(100);
  }
  atomic_store(&hold, 0);
  beat_for(1000);
  CHECK_EQ_INT(lagscope_stop(), 0);
  lagscope__store_test_hook(NULL);
  int missed = 0;
  for (int i = 0; i <= STALLS; i++) {
    if (told(stalls[i])) continue;
    printf("stall %d (%llu ms) is neither a hang nor inside a blind spell\n", i,
           (unsigned long long)((stalls[i].end - stalls[i].start) / NS_PER_MS));
    missed++;
  }
  printf("%d stalls: %d hangs told, %d blind spells, %d missed\n", STALLS + 1, hangs_len,
         blind_len, missed);
  CHECK_MSG(missed == 0, "%d of %d stalls missed without a word", missed, STALLS + 1);
  snprintf(command, sizeof(command), "rm -rf '%s'", root);
  if (system(command) != 0) fprintf(stderr, "could not remove %s\n", root);
  return 0;
}
