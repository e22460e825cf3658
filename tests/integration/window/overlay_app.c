/*
 * overlay_app: a program that links lagscope and asks for its HUD overlay over an X11 window it
 * is given by number (window_overlay's stuck_server case): lagscope_start (config.hud on, no
 * viewer), lagscope_hud_overlay_x11(NULL: $DISPLAY, WINDOW), its result said on stdout; then
 * SIGUSR1 stops lagscope (how long lagscope_stop took, said on stdout) and SIGUSR2 ends the
 * program (exit 0). Its main thread waits idle meanwhile (lagscope_idle_begin): no hang.
 * lagscope's error events go to stdout too, as lagscope_event_json lines (server_died reads
 * them).
 * Usage: overlay_app WINDOW
 */
#define _POSIX_C_SOURCE 200809L

#include "lagscope.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void print_errors(const lagscope_event *e, void *user) {
  (void)user;
  if (e->type != LAGSCOPE_EVENT_ERROR) return;
  char *json = lagscope_event_json(e);
  if (json == NULL) return;
  printf("%s\n", json);
  fflush(stdout);
  lagscope_free(json);
}

static void wait_for(const sigset_t *set, int wanted) {
  int sig = 0;
  while (sigwait(set, &sig) == 0 && sig != wanted) {
  }
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s WINDOW\n", argv[0]);
    return 2;
  }
  unsigned long window = strtoul(argv[1], NULL, 0);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR1);
  sigaddset(&set, SIGUSR2);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  lagscope_config c = lagscope_config_default();
  c.server = 0;
  c.on_event = print_errors;
  int rc = lagscope_start(&c);
  if (rc != 0) {
    fprintf(stderr, "overlay_app: lagscope_start: %s\n", lagscope_strerror(rc));
    return 1;
  }
  rc = lagscope_hud_overlay_x11(NULL, window);
  printf("{\"type\":\"overlay\",\"rc\":%d}\n", rc);
  fflush(stdout);
  lagscope_idle_begin();
  wait_for(&set, SIGUSR1);
  lagscope_idle_end();
  double begun = now_ms();
  rc = lagscope_stop();
  printf("{\"type\":\"stopped\",\"rc\":%d,\"ms\":%.1f}\n", rc, now_ms() - begun);
  fflush(stdout);
  wait_for(&set, SIGUSR2);
  return 0;
}
