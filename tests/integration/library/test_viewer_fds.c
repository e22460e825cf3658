/* The viewer once its first client has come, against an app that closes and reuses
 * descriptors (issue 42, item 2), and an app name that is not UTF-8 (issue 42, item 8). One
 * case per argv[1]; the viewer listens on 127.0.0.1, port 0.
 *   after-client  one viewer client is answered; then the app, as a daemon or a test harness
 *                 does, closes every descriptor from 3 up under lagscope's threads, opens a
 *                 listening socket of its own and connections that take those numbers: its
 *                 connections are never answered by lagscope, its socket stays open and
 *                 accepts, lagscope's threads do not spin, and the viewer still answers (or
 *                 said it could not). A pipe the app closes gives its reader EOF.
 *   app-name      config.app_name with bytes that are not UTF-8 (and a character cut by the
 *                 name's bound): /api/v1/status is JSON (strict) and /metrics passes
 *                 `promtool check metrics` (argv[2], when given) and is UTF-8 */
#define _GNU_SOURCE

#include "check.h"
#include "internal.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define STOP_BOUND_MS 3000  /* what docs/viewer-api.md promises for lagscope_stop */
#define APP_CONNECTIONS 10
#define SPIN_BOUND_TICKS 30 /* the viewer's threads' CPU over 1 s, in clock ticks (1/100 s) */

static int port;
static char token[64];
static pthread_mutex_t errors_lock = PTHREAD_MUTEX_INITIALIZER;
static char errors[4096];

static uint64_t now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

static void keep_errors(const lagscope_event *e, void *user) {
  (void)user;
  if (e->type != LAGSCOPE_EVENT_ERROR || e->payload.message == NULL) return;
  pthread_mutex_lock(&errors_lock);
  size_t used = strlen(errors);
  snprintf(errors + used, sizeof(errors) - used, "%s\n", e->payload.message);
  pthread_mutex_unlock(&errors_lock);
}

static int errors_name(const char *text) {
  pthread_mutex_lock(&errors_lock);
  int found = strstr(errors, text) != NULL;
  pthread_mutex_unlock(&errors_lock);
  return found;
}

static void start(lagscope_config *c, const char *reports) {
  c->report_dir = reports;
  c->server_bind = "127.0.0.1";
  c->server_port = 0;
  c->hud = 0;
  c->on_event = keep_errors;
  CHECK_EQ_INT(lagscope_start(c), 0);
  char url[256];
  CHECK_EQ_INT(lagscope_viewer_url(url, sizeof(url)), 0);
  const char *colon = strrchr(url, ':'), *t = strstr(url, "token=");
  CHECK(colon != NULL && t != NULL);
  port = atoi(colon + 1);
  snprintf(token, sizeof(token), "%s", t + 6);
  CHECK(port > 0 && strlen(token) == 32);
}

/* GET path with the token: the status (0: no answer within 5 s); the body in body. */
static int get(const char *path, char *body, size_t size) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  CHECK(fd >= 0);
  struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
  if (connect(fd, (struct sockaddr *)&to, sizeof(to)) != 0) {
    close(fd);
    return 0;
  }
  char request[512];
  int n = snprintf(request, sizeof(request),
                   "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n"
                   "Connection: close\r\n\r\n", path, token);
  CHECK(write(fd, request, (size_t)n) == n);
  static char answer[65536];
  size_t used = 0;
  uint64_t until = now_ms() + 5000;
  while (used < sizeof(answer) - 1) {
    uint64_t now = now_ms();
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (now >= until || poll(&p, 1, (int)(until - now)) <= 0) break;
    ssize_t got = read(fd, answer + used, sizeof(answer) - 1 - used);
    if (got <= 0) break;
    used += (size_t)got;
  }
  close(fd);
  answer[used] = '\0';
  int status = 0;
  if (sscanf(answer, "HTTP/1.1 %d", &status) != 1) status = 0;
  if (body != NULL) {
    const char *b = strstr(answer, "\r\n\r\n");
    snprintf(body, size, "%s", b != NULL ? b + 4 : "");
  }
  return status;
}

/* ---- after-client ---- */

/* CPU ticks (user + system) of the viewer's threads (lagscope-viewer, lagscope-json and
 * civetweb's); each thread's printed when print. The monitor's are not counted: the app's
 * busy moments may be a hang it rightly records. */
static long lagscope_ticks(int print) {
  DIR *d = opendir("/proc/self/task");
  CHECK(d != NULL);
  long total = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    char path[300], text[1024];
    snprintf(path, sizeof(path), "/proc/self/task/%s/stat", e->d_name);
    FILE *f = fopen(path, "re");
    if (f == NULL) continue; /* ended meanwhile */
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    char *open = strchr(text, '('), *close_paren = strrchr(text, ')');
    if (open == NULL || close_paren == NULL) continue;
    *close_paren = '\0';
    const char *name = open + 1;
    if (strcmp(name, "lagscope-viewer") != 0 && strcmp(name, "lagscope-json") != 0 &&
        strncmp(name, "civetweb", 8) != 0)
      continue;
    unsigned long utime = 0, stime = 0; /* fields 14 and 15; state is field 3 */
    if (sscanf(close_paren + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime,
               &stime) == 2)
      total += (long)(utime + stime);
    if (print) printf("  %s (task %s): %lu ticks since it started\n", name, e->d_name, utime + stime);
  }
  closedir(d);
  return total;
}

/* What the app holds once it has closed everything: a listening socket of its own and both ends
 * of connections to it, which take the numbers lagscope's and civetweb's descriptors had. */
typedef struct app_sockets {
  int listener, clients[APP_CONNECTIONS], accepted[APP_CONNECTIONS];
  uint16_t port;
} app_sockets;

/* The app's bug, played as a daemon or a test harness does: every descriptor from 3 up closed
 * under lagscope's threads, then its own opened on those numbers. tests/tsan.supp names this
 * function (the app's race, which the case is there to survive). */
static void app_closes_and_reuses_fds_after_client(app_sockets *app) {
  for (int fd = 3; fd < 1024; fd++) close(fd);
  app->listener = socket(AF_INET, SOCK_STREAM, 0);
  CHECK(app->listener >= 0);
  struct sockaddr_in a = {.sin_family = AF_INET};
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  socklen_t n = sizeof(a);
  CHECK(bind(app->listener, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(app->listener, 64) == 0);
  CHECK(getsockname(app->listener, (struct sockaddr *)&a, &n) == 0);
  app->port = ntohs(a.sin_port);
  for (int i = 0; i < APP_CONNECTIONS; i++) {
    app->clients[i] = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(app->clients[i] >= 0);
    CHECK_MSG(connect(app->clients[i], (struct sockaddr *)&a, sizeof(a)) == 0,
              "connection %d to the app's own socket: %s", i, strerror(errno));
    struct pollfd p = {.fd = app->listener, .events = POLLIN};
    CHECK_MSG(poll(&p, 1, 3000) == 1 && (p.revents & POLLIN),
              "the app's own socket (fd %d) did not see connection %d within 3 s (revents %#x): "
              "someone else accepted it or closed the socket", app->listener, i, p.revents);
    app->accepted[i] = accept(app->listener, NULL, NULL);
    CHECK_MSG(app->accepted[i] >= 0, "accept on the app's own socket (fd %d): %s", app->listener,
              strerror(errno));
  }
}

/* Reads what arrives on fd within ms, or until want bytes came, into out (NUL-terminated). */
static size_t read_for(int fd, int ms, size_t want, char *out, size_t size) {
  size_t used = 0;
  uint64_t until = now_ms() + (uint64_t)ms;
  while (used < size - 1 && used < want) {
    uint64_t now = now_ms();
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (now >= until || poll(&p, 1, (int)(until - now)) <= 0) break;
    ssize_t got = read(fd, out + used, size - 1 - used);
    if (got <= 0) break;
    used += (size_t)got;
  }
  out[used] = '\0';
  return used;
}

/* Each connection of the app's carries the app's bytes both ways, and nothing of lagscope's. */
static void check_app_connections(const app_sockets *app) {
  for (int i = 0; i < APP_CONNECTIONS; i++) {
    CHECK(write(app->clients[i], "ping\n", 5) == 5);
    char got[256];
    read_for(app->accepted[i], 2000, 5, got, sizeof(got));
    CHECK_MSG(strcmp(got, "ping\n") == 0, "connection %d (fds %d, %d): the app's end read '%s'", i,
              app->clients[i], app->accepted[i], got);
    CHECK(write(app->accepted[i], "pong\n", 5) == 5);
    read_for(app->clients[i], 2000, 5, got, sizeof(got));
    CHECK_MSG(strstr(got, "HTTP/") == NULL, "connection %d (fd %d) was answered by lagscope: %.80s",
              i, app->clients[i], got);
    CHECK_MSG(strcmp(got, "pong\n") == 0, "connection %d (fd %d): the client read '%s'", i,
              app->clients[i], got);
  }
}

static int case_after_client(void) {
  char reports[] = "/tmp/lagscope-viewer-fds-XXXXXX";
  CHECK(mkdtemp(reports) != NULL);
  lagscope_config c = lagscope_config_default();
  start(&c, reports);
  /* A pipe of the app's, open while civetweb starts: closing its writing end must still give
   * the reader EOF (no copy of it kept by lagscope). */
  int app_pipe[2];
  CHECK(pipe(app_pipe) == 0);
  CHECK_EQ_INT(get("/api/v1/status", NULL, 0), 200); /* civetweb starts: the first client */
  CHECK_EQ_INT(get("/api/v1/status", NULL, 0), 200);
  close(app_pipe[1]);
  struct pollfd p = {.fd = app_pipe[0], .events = POLLIN};
  char byte;
  CHECK_MSG(poll(&p, 1, 2000) == 1 && read(app_pipe[0], &byte, 1) == 0,
            "the app's pipe gave no EOF within 2 s once the app closed its writing end: a copy "
            "of it is held open");
  close(app_pipe[0]);

  static app_sockets app;
  app_closes_and_reuses_fds_after_client(&app);
  printf("the app's socket: fd %d; its connections: fds %d..%d\n", app.listener, app.clients[0],
         app.accepted[APP_CONNECTIONS - 1]);
  check_app_connections(&app);

  /* The main thread beats meanwhile (heartbeat mode): no hang for the monitor to sample. */
  long before = lagscope_ticks(0);
  for (uint64_t until = now_ms() + 1000; now_ms() < until;) {
    lagscope_heartbeat();
    struct timespec beat = {0, 10 * 1000 * 1000};
    nanosleep(&beat, NULL);
  }
  long spent = lagscope_ticks(1) - before;
  printf("the viewer's threads over 1 s: %ld ticks\n", spent);
  CHECK_MSG(spent < SPIN_BOUND_TICKS, "the viewer's threads spent %ld ticks (1/100 s) of CPU in 1 s "
            "with nothing to do", spent);
  check_app_connections(&app);

  /* The viewer answers on its port, or said why not. */
  int status = get("/api/v1/status", NULL, 0);
  pthread_mutex_lock(&errors_lock);
  printf("the viewer after the app's close: %d; errors: %s\n", status, errors);
  pthread_mutex_unlock(&errors_lock);
  CHECK_MSG(status == 200 || errors_name("viewer"),
            "the viewer no longer answers (%d) and no error event said so", status);

  uint64_t t0 = now_ms();
  CHECK_EQ_INT(lagscope_stop(), 0);
  uint64_t took = now_ms() - t0;
  printf("lagscope_stop: %llu ms\n", (unsigned long long)took);
  CHECK_MSG(took < STOP_BOUND_MS, "lagscope_stop took %llu ms", (unsigned long long)took);
  /* Nothing of the app's was closed, and its socket still accepts. */
  check_app_connections(&app);
  int one_more = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(app.port)};
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  CHECK_MSG(connect(one_more, (struct sockaddr *)&a, sizeof(a)) == 0,
            "the app's socket refused a connection after lagscope_stop: %s", strerror(errno));
  p = (struct pollfd){.fd = app.listener, .events = POLLIN};
  CHECK_MSG(poll(&p, 1, 3000) == 1, "the app's socket did not see a connection after stop");
  int last = accept(app.listener, NULL, NULL);
  CHECK(last >= 0);
  close(last);
  close(one_more);
  char command[128];
  snprintf(command, sizeof(command), "rm -rf '%s'", reports);
  CHECK(system(command) == 0);
  printf("after-client: ok\n");
  return 0;
}

/* ---- app-name ---- */

/* 1 when text[0..len) is UTF-8 throughout. */
static int is_utf8(const unsigned char *s, size_t len) {
  for (size_t i = 0; i < len;) {
    unsigned char c = s[i];
    size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 && c >= 0xc2 ? 2 : (c & 0xf0) == 0xe0 ? 3
             : (c & 0xf8) == 0xf0 && c <= 0xf4 ? 4 : 0;
    if (n == 0 || i + n > len) return 0;
    for (size_t k = 1; k < n; k++)
      if ((s[i + k] & 0xc0) != 0x80) return 0;
    i += n;
  }
  return 1;
}

static int case_app_name(const char *promtool) {
  char reports[] = "/tmp/lagscope-viewer-name-XXXXXX";
  CHECK(mkdtemp(reports) != NULL);
  /* Bytes that are no UTF-8 (a lone continuation byte, an overlong form, 0xff), then a name
   * long enough that its bound (63 bytes) cuts a two-byte character in half. */
  static const char *names[] = {"bad\x80name\xc0\xaf\xff\xfe",
                                "0123456789012345678901234567890123456789012345678901234567890"
                                "1\xc3\xa9tail"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    lagscope_config c = lagscope_config_default();
    c.app_name = names[i];
    start(&c, reports);
    static char body[65536];
    CHECK_EQ_INT(get("/api/v1/status", body, sizeof(body)), 200);
    size_t end = 0;
    CHECK_MSG(lagscope__json_check(body, strlen(body), &end) == 1 && end == strlen(body),
              "name %zu: /api/v1/status is not JSON: %.300s", i, body);
    CHECK_MSG(is_utf8((const unsigned char *)body, strlen(body)),
              "name %zu: /api/v1/status is not UTF-8 (RFC 8259 JSON): %.300s", i, body);
    CHECK_EQ_INT(get("/metrics", body, sizeof(body)), 200);
    CHECK_MSG(is_utf8((const unsigned char *)body, strlen(body)), "name %zu: /metrics is not UTF-8",
              i);
    if (promtool != NULL) {
      char file[300], command[800];
      snprintf(file, sizeof(file), "%s/metrics.txt", reports);
      FILE *f = fopen(file, "we");
      CHECK(f != NULL && fputs(body, f) >= 0 && fclose(f) == 0);
      snprintf(command, sizeof(command), "'%s' check metrics < '%s'", promtool, file);
      int rc = system(command);
      CHECK_MSG(rc == 0, "name %zu: promtool check metrics failed (%d) on:\n%.600s", i, rc, body);
    }
    CHECK_EQ_INT(lagscope_stop(), 0);
  }
  char command[128];
  snprintf(command, sizeof(command), "rm -rf '%s'", reports);
  CHECK(system(command) == 0);
  printf("app-name: ok%s\n", promtool != NULL ? " (promtool too)" : " (no promtool)");
  return 0;
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  CHECK(argc >= 2);
  if (strcmp(argv[1], "after-client") == 0) return case_after_client();
  if (strcmp(argv[1], "app-name") == 0) return case_app_name(argc > 2 ? argv[2] : NULL);
  CHECK_MSG(0, "no case %s", argv[1]);
  return 1;
}
