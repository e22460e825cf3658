/* The capture signal belongs to the app when the app wants it. argv[1]:
 *   taken-at-start  the app handles SIGRTMIN+3 before start: asked for it, capture_init says
 *                   ESIGNAL (not "a limit was reached"); left to choose, it takes the next free
 *                   one and running threads are captured, the app's handler never called
 *   taken-after     the app installs its own handler on lagscope's signal after start: the next
 *                   capture of a running thread sends nothing (the app's handler is never
 *                   called) and says ESIGNAL; a blocked thread is still captured
 *   handler-mask    a thread whose mask is our handler's (a late signal's delivery, handler or
 *                   return): unanswered, never taken for the app blocking signals
 *   not-realtime    config.capture_signal = SIGUSR1: EINVAL; 65: refused by validation
 *   events          through lagscope_start: the app takes the signal after start, the main
 *                   thread hangs busy three times: exactly one error event (ESIGNAL), the
 *                   app's handler never called, every hang still reported */
#define _GNU_SOURCE
#include "check.h"
#include "host_loop.h"
#include "internal.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static _Atomic int app_handler_calls;
static void app_handler(int sig) {
  (void)sig;
  atomic_fetch_add(&app_handler_calls, 1);
}

static void take_signal(int sig) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = app_handler;
  CHECK(sigaction(sig, &sa, NULL) == 0);
}

static _Atomic int32_t spinner_tid, sleeper_tid;
static _Atomic int stop;
static void *spinner(void *arg) {
  (void)arg;
  atomic_store(&spinner_tid, lagscope__thread_id());
  while (!atomic_load(&stop)) {}
  return NULL;
}
static void *sleeper(void *arg) {
  (void)arg;
  atomic_store(&sleeper_tid, lagscope__thread_id());
  while (!atomic_load(&stop)) usleep(20000);
  return NULL;
}

static void start_threads(pthread_t t[2]) {
  CHECK(pthread_create(&t[0], NULL, spinner, NULL) == 0);
  CHECK(pthread_create(&t[1], NULL, sleeper, NULL) == 0);
  while (atomic_load(&spinner_tid) == 0 || atomic_load(&sleeper_tid) == 0) usleep(1000);
}

static void stop_threads(pthread_t t[2]) {
  atomic_store(&stop, 1);
  pthread_join(t[0], NULL);
  pthread_join(t[1], NULL);
}

static void taken_at_start(void) {
  take_signal(SIGRTMIN + 3);
  CHECK_EQ_INT(lagscope__capture_init((uint32_t)(SIGRTMIN + 3)), LAGSCOPE_ESIGNAL);
  CHECK_EQ_INT(lagscope__capture_init(0), LAGSCOPE_OK);
  CHECK_EQ_INT(lagscope__capture_signal(), SIGRTMIN + 4);
  pthread_t t[2];
  start_threads(t);
  static lagscope__stack stack;
  CHECK_EQ_INT(lagscope__capture_stack(atomic_load(&spinner_tid), &stack, 1000000000u), 0);
  CHECK_EQ_INT(stack.method, LAGSCOPE__METHOD_SIGNAL);
  stop_threads(t);
  CHECK_EQ_INT(atomic_load(&app_handler_calls), 0);
  printf("SIGRTMIN+3 taken: refused when asked for, SIGRTMIN+4 chosen otherwise\n");
}

static void taken_after(void) {
  CHECK_EQ_INT(lagscope__capture_init(0), LAGSCOPE_OK);
  int sig = lagscope__capture_signal();
  pthread_t t[2];
  start_threads(t);
  static lagscope__stack stack;
  CHECK_EQ_INT(lagscope__capture_stack(atomic_load(&spinner_tid), &stack, 1000000000u), 0);
  take_signal(sig);
  CHECK_EQ_INT(lagscope__capture_stack(atomic_load(&spinner_tid), &stack, 1000000000u),
               LAGSCOPE_ESIGNAL);
  CHECK_EQ_INT(stack.walk, LAGSCOPE__WALK_NO_REPLY);
  int blocked = 0;
  for (int i = 0; i < 1000 && !blocked; i++) /* the sleeper is asleep nearly all the time */
    blocked = lagscope__capture_stack(atomic_load(&sleeper_tid), &stack, 1000000000u) == 0 &&
              stack.method == LAGSCOPE__METHOD_BLOCKED;
  CHECK(blocked);
  stop_threads(t);
  CHECK_EQ_INT(atomic_load(&app_handler_calls), 0);
  printf("signal %d taken after start: running threads refused, blocked ones taken\n", sig);
}

/* A thread in the state our handler's late signal leaves it in for a moment (the kernel
 * delivering it, the handler, the return): every signal blocked but the handler's hole. Not
 * the app blocking signals: the capture goes unanswered (NO_REPLY), not SIGNAL_BLOCKED, and
 * once the mask is the app's again the thread is taken as before. Under load the moment lasted
 * long enough that a thread was told as blocking signals from then on (test_standin, 6 at once,
 * 1 run in ~150-240). */
static _Atomic int32_t masked_tid;
static _Atomic int unmask;
static void *masked_spinner(void *arg) {
  (void)arg;
  sigset_t handler_like, before;
  sigfillset(&handler_like);
  sigdelset(&handler_like, SIGRTMAX);
  CHECK(pthread_sigmask(SIG_BLOCK, &handler_like, &before) == 0);
  atomic_store(&masked_tid, lagscope__thread_id());
  while (!atomic_load(&unmask)) {}
  CHECK(pthread_sigmask(SIG_SETMASK, &before, NULL) == 0);
  while (!atomic_load(&stop)) {}
  return NULL;
}

static void handler_mask(void) {
  CHECK_EQ_INT(lagscope__capture_init(0), LAGSCOPE_OK);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, masked_spinner, NULL) == 0);
  while (atomic_load(&masked_tid) == 0) usleep(1000);
  static lagscope__stack stack;
  for (int i = 0; i < 3; i++) { /* the second and later too: nothing latched */
    int rc = lagscope__capture_stack(atomic_load(&masked_tid), &stack, 50000000u);
    CHECK_MSG(rc == LAGSCOPE_ENOENT && stack.walk == LAGSCOPE__WALK_NO_REPLY,
              "capture %d of a thread with the handler's mask: %s (walk %s), not unanswered", i,
              lagscope_strerror(rc), lagscope__walk_name(stack.walk));
  }
  atomic_store(&unmask, 1);
  int rc = LAGSCOPE_ENOENT;
  for (int i = 0; i < 20 && rc == LAGSCOPE_ENOENT; i++) /* a loaded machine's unanswered ones */
    rc = lagscope__capture_stack(atomic_load(&masked_tid), &stack, 1000000000u);
  CHECK_MSG(rc == LAGSCOPE_OK && stack.method == LAGSCOPE__METHOD_SIGNAL,
            "the thread unmasked: %s (walk %s)", lagscope_strerror(rc),
            lagscope__walk_name(stack.walk));
  atomic_store(&stop, 1);
  pthread_join(t, NULL);
  printf("a thread with the handler's mask: unanswered, not signal_blocked; taken once unmasked\n");
}

static void not_realtime(void) {
  CHECK_EQ_INT(lagscope__capture_init(SIGUSR1), LAGSCOPE_EINVAL);
  lagscope_config c = lagscope_config_default();
  c.capture_signal = 65;
  char why[256];
  CHECK_EQ_INT(lagscope_config_validate(&c, why, sizeof(why)), LAGSCOPE_EINVAL);
  CHECK(strstr(why, "capture_signal") != NULL);
  printf("%s\n", why);
}

/* ---- through the public API ---- */

static _Atomic int signal_errors, other_errors, hangs_ended;
static void on_event(const lagscope_event *e, void *user) {
  (void)user;
  if (e->type == LAGSCOPE_EVENT_ERROR) {
    if (e->as.error.code == LAGSCOPE_ESIGNAL) atomic_fetch_add(&signal_errors, 1);
    else atomic_fetch_add(&other_errors, 1);
  }
  if (e->type == LAGSCOPE_EVENT_HANG_ENDED) atomic_fetch_add(&hangs_ended, 1);
}

static unsigned stalls;
static void stall_frame(host_loop *loop, uint64_t frame, void *user) {
  (void)loop, (void)user;
  if (frame == 5) take_signal(SIGRTMIN + 5); /* the app takes lagscope's signal */
  if (frame >= 10 && frame % 30 == 0 && stalls < 3 && atomic_load(&hangs_ended) == (int)stalls) {
    test_stall_busy(400);
    stalls++;
  }
}
static int done(void *user) {
  (void)user;
  return stalls == 3 && atomic_load(&hangs_ended) == 3;
}

static void events(void) {
  char dir[] = "/tmp/lagscope-signal-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  host_loop *loop = host_loop_new(60);
  lagscope_config c = lagscope_config_default();
  c.post_main = host_loop_post, c.post_main_user = loop;
  c.on_event = on_event;
  c.server = 0, c.hud = 0, c.report_dir = dir;
  c.capture_signal = (uint32_t)(SIGRTMIN + 5);
  CHECK_EQ_INT(lagscope_start(&c), 0);
  host_loop_run(loop, stall_frame, done, NULL, 30);
  CHECK_EQ_INT(lagscope_stop(), 0);
  host_loop_free(loop);
  char rm[128];
  snprintf(rm, sizeof(rm), "rm -rf %s", dir);
  CHECK(system(rm) == 0);
  printf("%d hangs, %d capture-signal errors, %d other errors, app handler called %d times\n",
         atomic_load(&hangs_ended), atomic_load(&signal_errors), atomic_load(&other_errors),
         atomic_load(&app_handler_calls));
  CHECK_EQ_INT(atomic_load(&hangs_ended), 3);
  CHECK_EQ_INT(atomic_load(&signal_errors), 1);
  CHECK_EQ_INT(atomic_load(&app_handler_calls), 0);
}

int main(int argc, char **argv) {
  CHECK(argc == 2);
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (strcmp(argv[1], "taken-at-start") == 0) taken_at_start();
  else if (strcmp(argv[1], "taken-after") == 0) {
    SKIP_UNDER_TSAN(); /* the spinner enters no interceptor: TSan would never deliver it */
    taken_after();
  } else if (strcmp(argv[1], "handler-mask") == 0) {
    SKIP_UNDER_TSAN(); /* the spinner enters no interceptor: TSan would never deliver it */
    handler_mask();
  } else if (strcmp(argv[1], "not-realtime") == 0) not_realtime();
  else if (strcmp(argv[1], "events") == 0) events();
  else CHECK(!"unknown case");
  return 0;
}
