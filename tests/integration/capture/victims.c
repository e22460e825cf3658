/* The C victims: see victims.h. */
#define _GNU_SOURCE
#include "victims.h"

#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

static int pipe_read[2], pipe_poll[2], pipe_epoll[2], epoll_fd;
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cond_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int released; /* __atomic: read by the victims, set by the releaser */

void victims_prepare(void) {
  if (pipe(pipe_read) || pipe(pipe_poll) || pipe(pipe_epoll)) perror("pipe");
  epoll_fd = epoll_create1(0);
  struct epoll_event e = {.events = EPOLLIN};
  epoll_ctl(epoll_fd, EPOLL_CTL_ADD, pipe_epoll[0], &e);
  pthread_mutex_lock(&mutex);
}

__attribute__((noinline)) static void victim_nanosleep_inner(void) {
  while (!__atomic_load_n(&released, __ATOMIC_ACQUIRE)) {
    struct timespec ts = {60, 0};
    nanosleep(&ts, NULL);
  }
  __asm__ volatile("");
}
__attribute__((noinline)) static void victim_read_inner(void) {
  char c;
  (void)!read(pipe_read[0], &c, 1);
  __asm__ volatile("");
}
__attribute__((noinline)) static void victim_poll_inner(void) {
  struct pollfd p = {.fd = pipe_poll[0], .events = POLLIN};
  poll(&p, 1, 60000);
  __asm__ volatile("");
}
__attribute__((noinline)) static void victim_mutex_inner(void) {
  pthread_mutex_lock(&mutex);
  pthread_mutex_unlock(&mutex);
  __asm__ volatile("");
}
__attribute__((noinline)) static void victim_cond_inner(void) {
  pthread_mutex_lock(&cond_mutex);
  while (!__atomic_load_n(&released, __ATOMIC_ACQUIRE)) pthread_cond_wait(&cond, &cond_mutex);
  pthread_mutex_unlock(&cond_mutex);
  __asm__ volatile("");
}
__attribute__((noinline)) static void victim_epoll_inner(void) {
  struct epoll_event e;
  epoll_wait(epoll_fd, &e, 1, 60000);
  __asm__ volatile("");
}

/* The outer functions keep a few locals and a call before the inner one, so that their frames
 * are not empty (a scan must pass over them). */
#define OUTER(kind)                                                      \
  __attribute__((noinline)) static void victim_##kind##_outer(void) {    \
    volatile uintptr_t locals[4] = {1, 2, 3, 4};                         \
    victim_##kind##_inner();                                             \
    __asm__ volatile("" ::"r"(locals) : "memory");                       \
  }
OUTER(nanosleep) OUTER(read) OUTER(poll) OUTER(mutex) OUTER(cond) OUTER(epoll)

void *victims_thread(void *arg) {
  switch ((int)(intptr_t)arg) {
    case VICTIM_NANOSLEEP: victim_nanosleep_outer(); break;
    case VICTIM_READ: victim_read_outer(); break;
    case VICTIM_POLL: victim_poll_outer(); break;
    case VICTIM_MUTEX: victim_mutex_outer(); break;
    case VICTIM_COND: victim_cond_outer(); break;
    case VICTIM_EPOLL: victim_epoll_outer(); break;
  }
  __asm__ volatile("");
  return NULL;
}

static const char *names[VICTIM_KINDS][2] = {
    {"victim_nanosleep_inner", "victim_nanosleep_outer"}, {"victim_read_inner", "victim_read_outer"},
    {"victim_poll_inner", "victim_poll_outer"},           {"victim_mutex_inner", "victim_mutex_outer"},
    {"victim_cond_inner", "victim_cond_outer"},           {"victim_epoll_inner", "victim_epoll_outer"}};
const char *victims_inner_name(int kind) { return names[kind][0]; }
const char *victims_outer_name(int kind) { return names[kind][1]; }

void victims_release(void) {
  __atomic_store_n(&released, 1, __ATOMIC_RELEASE);
  (void)!write(pipe_read[1], "x", 1);
  (void)!write(pipe_poll[1], "x", 1);
  (void)!write(pipe_epoll[1], "x", 1);
  pthread_mutex_unlock(&mutex);
  pthread_mutex_lock(&cond_mutex);
  pthread_cond_broadcast(&cond);
  pthread_mutex_unlock(&cond_mutex);
}
