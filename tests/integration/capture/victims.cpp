// The C++ victims: see victims.h. Member functions in a namespace, so that the names the
// symbolicator demangles and the names gdb shows are qualified C++ names.
#include "victims.h"

#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

namespace victims {

static int pipe_read[2], pipe_poll[2], pipe_epoll[2], epoll_fd;
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cond_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int released; /* __atomic: read by the victims, set by the releaser */

class Waiter {
 public:
  explicit Waiter(int kind) : kind_(kind) {}
  __attribute__((noinline)) void outer();
  __attribute__((noinline)) void inner();

 private:
  int kind_;
};

void Waiter::inner() {
  switch (kind_) {
    case VICTIM_NANOSLEEP:
      while (!__atomic_load_n(&released, __ATOMIC_ACQUIRE)) {
        struct timespec ts = {60, 0};
        nanosleep(&ts, nullptr);
      }
      break;
    case VICTIM_READ: {
      char c;
      if (read(pipe_read[0], &c, 1) < 0) perror("read");
      break;
    }
    case VICTIM_POLL: {
      struct pollfd p = {pipe_poll[0], POLLIN, 0};
      poll(&p, 1, 60000);
      break;
    }
    case VICTIM_MUTEX:
      pthread_mutex_lock(&mutex);
      pthread_mutex_unlock(&mutex);
      break;
    case VICTIM_COND:
      pthread_mutex_lock(&cond_mutex);
      while (!__atomic_load_n(&released, __ATOMIC_ACQUIRE)) pthread_cond_wait(&cond, &cond_mutex);
      pthread_mutex_unlock(&cond_mutex);
      break;
    case VICTIM_EPOLL: {
      struct epoll_event e;
      epoll_wait(epoll_fd, &e, 1, 60000);
      break;
    }
  }
  __asm__ volatile("");
}

void Waiter::outer() {
  volatile uintptr_t locals[4] = {1, 2, 3, 4};
  inner();
  __asm__ volatile("" ::"r"(locals) : "memory");
}

}  // namespace victims

extern "C" {

void victims_prepare(void) {
  using namespace victims;
  if (pipe(pipe_read) || pipe(pipe_poll) || pipe(pipe_epoll)) perror("pipe");
  epoll_fd = epoll_create1(0);
  struct epoll_event e = {};
  e.events = EPOLLIN;
  epoll_ctl(epoll_fd, EPOLL_CTL_ADD, pipe_epoll[0], &e);
  pthread_mutex_lock(&mutex);
}

void *victims_thread(void *arg) {
  victims::Waiter *w = new victims::Waiter((int)(intptr_t)arg); // libstdc++, as in any C++ app
  w->outer();
  delete w;
  __asm__ volatile("");
  return nullptr;
}

const char *victims_inner_name(int) { return "victims::Waiter::inner"; }
const char *victims_outer_name(int) { return "victims::Waiter::outer"; }

void victims_release(void) {
  using namespace victims;
  __atomic_store_n(&released, 1, __ATOMIC_RELEASE);
  if (write(pipe_read[1], "x", 1) < 0 || write(pipe_poll[1], "x", 1) < 0 ||
      write(pipe_epoll[1], "x", 1) < 0)
    perror("write");
  pthread_mutex_unlock(&mutex);
  pthread_mutex_lock(&cond_mutex);
  pthread_cond_broadcast(&cond);
  pthread_mutex_unlock(&cond_mutex);
}
}
