/* The release library: every call is a no-op returning LAGSCOPE_DISABLED, and nothing
 * exists afterwards that it could have made: no thread, no socket or other descriptor, no
 * signal handler. Linked against lagscope_disabled, the library a Release build installs. */
/* check-test-viewers: the disabled library starts nothing (that is what it checks). */
#define _GNU_SOURCE
#include "check.h"
#include "host_loop.h"

#include <dirent.h>
#include <signal.h>
#include <string.h>

static int count_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;)
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n;
}

static int handlers_installed(void) {
  int n = 0;
  for (int sig = 1; sig < SIGRTMAX; sig++) {
    struct sigaction sa;
    if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN)
      n++;
  }
  return n;
}

static void never_called(const lagscope_event *e, void *user) {
  (void)e, (void)user;
  CHECK(!"an event in a disabled build");
}

int main(void) {
  int fds = count_fds(), handlers = handlers_installed();
  CHECK_EQ_INT(test_thread_count(), 1);
  lagscope_config c = lagscope_config_default();
  c.on_event = never_called;
  char why[64] = "x";
  CHECK_EQ_INT(lagscope_config_validate(&c, why, sizeof(why)), LAGSCOPE_DISABLED);
  CHECK_EQ_INT(lagscope_start(&c), LAGSCOPE_DISABLED);
  CHECK_EQ_INT(lagscope_start(NULL), LAGSCOPE_DISABLED);
  CHECK(!lagscope_is_running());
  lagscope_frame();
  lagscope_heartbeat();
  lagscope_subscription id = 99;
  CHECK_EQ_INT(lagscope_subscribe(never_called, NULL, &id), LAGSCOPE_DISABLED);
  CHECK_EQ_INT(lagscope_unsubscribe(id), LAGSCOPE_DISABLED);
  lagscope_metrics m;
  CHECK_EQ_INT(lagscope_metrics_latest(&m), LAGSCOPE_DISABLED);
  lagscope_event e = {.type = LAGSCOPE_EVENT_METRICS};
  CHECK(lagscope_event_json(&e) == NULL);
  CHECK_EQ_INT(lagscope_hud_overlay_x11(NULL, 1), LAGSCOPE_DISABLED);
  CHECK_EQ_INT(lagscope_stop(), LAGSCOPE_DISABLED);
  CHECK(strstr(lagscope_strerror(LAGSCOPE_DISABLED), "release") != NULL);
  CHECK_EQ_INT(test_thread_count(), 1);
  CHECK_EQ_INT(count_fds(), fds);
  CHECK_EQ_INT(handlers_installed(), handlers);
  printf("disabled: every call inert\n");
  return 0;
}
