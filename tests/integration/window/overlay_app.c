/*
 * overlay_app: a program that links lagscope and asks for its HUD overlay over an X11 window it
 * is given by number (window_overlay's stuck_server case): lagscope_start (config.hud on, no
 * viewer), lagscope_hud_overlay_x11(NULL: $DISPLAY, WINDOW), its result said on stdout; then
 * SIGUSR1 stops lagscope (how long lagscope_stop took, said on stdout) and SIGUSR2 ends the
 * program (exit 0). Its main thread waits idle meanwhile (lagscope_idle_begin): no hang.
 * With FOLDER (window_overlay's closed_fds case), the first SIGUSR1 makes it close every
 * descriptor from 3 up, as a daemon does, and open 16 files of its own in FOLDER on those
 * numbers ({"type":"closed"}); the next stops lagscope, and then it says how many bytes
 * lagscope wrote into its files and how many of them it closed ({"type":"files"}).
 * lagscope's error events go to stdout too, as lagscope_event_json lines (server_died reads
 * them).
 * Usage: overlay_app WINDOW [FOLDER]
 */
#define _GNU_SOURCE

#include "lagscope.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
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

enum { APP_FILES = 16 };
static int files[APP_FILES];

/* The app's bug: every descriptor from 3 up closed under lagscope's threads (the overlay's X
 * connection among them), then files of its own opened on those numbers. tests/tsan.supp
 * names this function: the race with lagscope's use of a number is the app's, played here. */
static void app_closes_and_reuses_fds_x11(const char *folder) {
  for (int fd = 3; fd < 1024; fd++) close(fd);
  for (int i = 0; i < APP_FILES; i++) {
    char path[600];
    snprintf(path, sizeof path, "%s/app-file-%d", folder, i);
    files[i] = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  }
}

/* {"type":"files","written":bytes lagscope wrote into the app's files,"closed":how many of them
 * are no longer open}. */
static void say_files(void) {
  long long written = 0;
  int closed = 0;
  for (int i = 0; i < APP_FILES; i++) {
    struct stat st;
    if (files[i] < 0 || fstat(files[i], &st) != 0) closed++;
    else written += (long long)st.st_size;
  }
  printf("{\"type\":\"files\",\"written\":%lld,\"closed\":%d}\n", written, closed);
  fflush(stdout);
}

static void wait_for(const sigset_t *set, int wanted) {
  int sig = 0;
  while (sigwait(set, &sig) == 0 && sig != wanted) {
  }
}

int main(int argc, char **argv) {
  if (argc != 2 && argc != 3) {
    fprintf(stderr, "usage: %s WINDOW [FOLDER]\n", argv[0]);
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
  c.hud_corner = LAGSCOPE_HUD_TOP_LEFT; /* where window_overlay's shots look */
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
  if (argc == 3) {
    app_closes_and_reuses_fds_x11(argv[2]);
    printf("{\"type\":\"closed\"}\n");
    fflush(stdout);
    wait_for(&set, SIGUSR1);
  }
  lagscope_idle_end();
  double begun = now_ms();
  rc = lagscope_stop();
  printf("{\"type\":\"stopped\",\"rc\":%d,\"ms\":%.1f}\n", rc, now_ms() - begun);
  fflush(stdout);
  if (argc == 3) say_files();
  wait_for(&set, SIGUSR2);
  return 0;
}
