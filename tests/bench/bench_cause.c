/*
 * bench_cause — the cost of saying why (core/cause/cause.c, core/linux/wait_target.c), beside what
 * it is added to, measured in the same run:
 *   1. classifying one sample (lagscope__classify_stack on a futex wait under
 *      pthread_mutex_lock) beside a bare blocked capture of a thread in nanosleep;
 *   2. a capture of a thread blocked on a mutex (the owner read from the mutex included)
 *      beside the same capture of a thread in nanosleep;
 *   3. naming a socket's peer from /proc/net with 1 000 open sockets beside readlink of the
 *      same fd alone.
 * Usage: bench_cause [--rounds N] [--sockets N]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "bench.h"

#include "internal.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int32_t sleeper_tid, locker_tid;

static void *sleeper(void *arg) {
  (void)arg;
  atomic_store(&sleeper_tid, lagscope__thread_id());
  for (;;) {
    struct timespec ts = {3600, 0};
    nanosleep(&ts, NULL);
  }
  return NULL;
}

static void *locker(void *arg) {
  (void)arg;
  atomic_store(&locker_tid, lagscope__thread_id());
  pthread_mutex_lock(&held); /* held by main for good */
  return NULL;
}

static double median_ns(double *v, unsigned n) { return bench_median(v, n); }

/* ns per call of fn over `rounds` samples of `batch` calls. */
#define TIME_BATCHES(out, rounds, batch, body)                                     \
  do {                                                                             \
    double *samples_ = calloc(rounds, sizeof(double));                             \
    for (unsigned r_ = 0; r_ < (rounds); r_++) {                                   \
      uint64_t t0_ = bench_now_ns();                                               \
      for (unsigned b_ = 0; b_ < (batch); b_++) { body; }                          \
      samples_[r_] = (double)(bench_now_ns() - t0_) / (batch);                     \
    }                                                                              \
    (out) = median_ns(samples_, rounds);                                           \
    free(samples_);                                                                \
  } while (0)

static volatile int sink;

int main(int argc, char **argv) {
  unsigned rounds = bench_arg_uint(argc, argv, "--rounds", 200, 5);
  unsigned sockets = bench_arg_uint(argc, argv, "--sockets", 1000, 2);
  lagscope__capture_init(0);
  pthread_mutex_lock(&held);
  pthread_t t1, t2;
  pthread_create(&t1, NULL, sleeper, NULL);
  pthread_create(&t2, NULL, locker, NULL);
  pthread_detach(t1);
  pthread_detach(t2);
  while (atomic_load(&sleeper_tid) == 0 || atomic_load(&locker_tid) == 0) usleep(1000);
  usleep(50000); /* both into their calls: the captures below check they are blocked */

  static lagscope__stack s_sleep, s_lock;
  double capture_sleep, capture_lock, classify;
  TIME_BATCHES(capture_sleep, rounds, 20,
               lagscope__capture_stack(atomic_load(&sleeper_tid), &s_sleep, 100000000u));
  TIME_BATCHES(capture_lock, rounds, 20,
               lagscope__capture_stack(atomic_load(&locker_tid), &s_lock, 100000000u));
  const char *names[] = {"__futex_abstimed_wait_common", "__GI___lll_lock_wait",
                         "pthread_mutex_lock", "locker", "start_thread", "clone3"};
  const lagscope__frame_names frames = {names, NULL, 6};
  TIME_BATCHES(classify, rounds, 1000, sink += lagscope__classify_stack(&s_lock, &frames));
  int32_t owner = s_lock.lock_owner;

  bench_table_begin("classifying a sample, and the owner read, beside a blocked capture");
  char value[64], base[64], ratio[16];
  snprintf(value, sizeof value, "%.1f ns", classify);
  snprintf(base, sizeof base, "%.2f us blocked capture", capture_sleep / 1e3);
  bench_row("classify one sample (a futex under pthread_mutex_lock)", value, base,
            bench_ratio(ratio, sizeof ratio, classify, capture_sleep), "-");
  snprintf(value, sizeof value, "%.2f us (owner %s)", capture_lock / 1e3,
           owner == lagscope__thread_id() ? "found" : "NOT found");
  snprintf(base, sizeof base, "%.2f us in nanosleep", capture_sleep / 1e3);
  bench_row("capture of a thread waiting for a mutex", value, base,
            bench_ratio(ratio, sizeof ratio, capture_lock, capture_sleep), "-");

  /* Sockets: a listener on 127.0.0.1 (port 0) and sockets/2 connected pairs. */
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof a;
  if (bind(listener, (struct sockaddr *)&a, sizeof a) != 0 || listen(listener, 4096) != 0 ||
      getsockname(listener, (struct sockaddr *)&a, &len) != 0) {
    perror("bench_cause: listener");
    return 1;
  }
  int last = -1;
  for (unsigned i = 0; i + 1 < sockets; i += 2) {
    int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof a) != 0) break;
    int s = accept(listener, NULL, NULL);
    if (s < 0) break;
    last = c;
  }
  lagscope__stack blocked = s_sleep;
  blocked.run_state = LAGSCOPE__RUN_SYSCALL;
  blocked.syscall = SYS_recvfrom;
  blocked.args[0] = (uintptr_t)last;
  char target[LAGSCOPE__TARGET_MAX], path[64], link[256];
  snprintf(path, sizeof path, "/proc/self/fd/%d", last);
  double name_peer, readlink_alone;
  TIME_BATCHES(name_peer, rounds / 10 + 1, 5,
               lagscope__describe_wait_target(&blocked, target, sizeof target));
  TIME_BATCHES(readlink_alone, rounds, 20, sink += (int)readlink(path, link, sizeof link));
  char title[128];
  snprintf(title, sizeof title, "naming a socket's peer with %u open sockets", sockets);
  bench_table_begin(title);
  snprintf(value, sizeof value, "%.1f us", name_peer / 1e3);
  snprintf(base, sizeof base, "%.1f us readlink alone", readlink_alone / 1e3);
  bench_row("describe one socket (/proc/net/tcp by inode)", value, base,
            bench_ratio(ratio, sizeof ratio, name_peer, readlink_alone), "-");
  printf("(named: %s)\n", target);
  return 0;
}
