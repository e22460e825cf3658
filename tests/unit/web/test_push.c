/* The push at lagscope_stop (web/push.c) against a gateway played here on 127.0.0.1, port 0:
 * the request (PUT, the path with the job and instance escaped as the Pushgateway reads them:
 * base64url after "@base64" for a value with a '/', percent-escapes otherwise; the 0.0.4 text
 * as its body) and the log line; a gateway that never answers holds lagscope_stop no longer
 * than the 2 s bound (and says so in one line); a refused port, at once. (A real Pushgateway
 * and Prometheus: tests/integration/web/pushgateway.test.js.) */
#define _GNU_SOURCE
#include "http.h"

#include "cases.h"
#include "check.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct gateway {
  int listener;
  uint16_t port;
  int answer; /* 1: answer 200 once the request is whole; 0: read and say nothing */
  char request[65536];
  size_t len;
  pthread_t thread;
} gateway;

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char logged[4096];

static void keep_log(const char *line, void *user) {
  (void)user;
  pthread_mutex_lock(&log_lock);
  size_t n = strlen(logged);
  snprintf(logged + n, sizeof(logged) - n, "%s\n", line);
  pthread_mutex_unlock(&log_lock);
}

static int request_whole(const gateway *g) {
  const char *end = strstr(g->request, "\r\n\r\n");
  const char *length = strstr(g->request, "Content-Length: ");
  return end != NULL && length != NULL &&
         g->len >= (size_t)(end + 4 - g->request) + strtoul(length + 16, NULL, 10);
}

static void *serve(void *arg) {
  gateway *g = arg;
  int fd = accept(g->listener, NULL, NULL);
  if (fd < 0) return NULL;
  for (;;) {
    ssize_t n = recv(fd, g->request + g->len, sizeof(g->request) - 1 - g->len, 0);
    if (n <= 0) break;
    g->len += (size_t)n;
    g->request[g->len] = '\0';
    if (g->answer && request_whole(g)) {
      static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
      CHECK(send(fd, ok, sizeof(ok) - 1, 0) == (ssize_t)(sizeof(ok) - 1));
      break;
    }
  }
  close(fd);
  return NULL;
}

static void gateway_start(gateway *g, int answer) {
  memset(g, 0, sizeof(*g));
  g->answer = answer;
  g->listener = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t n = sizeof(a);
  CHECK(bind(g->listener, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(g->listener, 4) == 0);
  CHECK(getsockname(g->listener, (struct sockaddr *)&a, &n) == 0);
  g->port = ntohs(a.sin_port);
  CHECK(pthread_create(&g->thread, NULL, serve, g) == 0);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* lagscope started and stopped with the push to url; how long lagscope_stop took, in s. */
static double run_with_push(const char *url, const char *app, const char *instance) {
  char dir[] = "/tmp/lagscope-test-push-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  lagscope_config c = lagscope_config_default();
  c.server = 0;
  c.hud = 0;
  c.report_dir = dir;
  c.app_name = app;
  c.pushgateway_url = url;
  c.pushgateway_instance = instance;
  c.log = keep_log;
  logged[0] = '\0';
  CHECK_EQ_INT(lagscope_start(&c), LAGSCOPE_OK);
  double t0 = now_s();
  CHECK_EQ_INT(lagscope_stop(), LAGSCOPE_OK);
  double took = now_s() - t0;
  char command[128];
  snprintf(command, sizeof(command), "rm -rf %s", dir);
  CHECK(system(command) == 0);
  return took;
}

static void test_pushed_at_stop(void) {
  gateway g;
  gateway_start(&g, 1);
  char url[64];
  snprintf(url, sizeof(url), "http://127.0.0.1:%u/gw/", (unsigned)g.port);
  run_with_push(url, "my app/1", "ci 1");
  pthread_join(g.thread, NULL);
  close(g.listener);
  /* base64url("my app/1") = bXkgYXBwLzE (no padding); "ci 1" percent-escaped */
  static const char line[] = "PUT /gw/metrics/job@base64/bXkgYXBwLzE/instance/ci%201 HTTP/1.1\r\n";
  CHECK_MSG(strncmp(g.request, line, strlen(line)) == 0, "the request:\n%s", g.request);
  char host[64];
  snprintf(host, sizeof(host), "\r\nHost: 127.0.0.1:%u\r\n", (unsigned)g.port);
  CHECK_MSG(strstr(g.request, host) != NULL, "no %s in:\n%s", host, g.request);
  CHECK(strstr(g.request, "\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n") != NULL);
  CHECK_MSG(strstr(g.request, "\r\n\r\n# HELP lagscope_info ") != NULL, "%s", g.request);
  CHECK(strstr(g.request, "lagscope_hangs_total{kind=\"cpu\"} 0\n") != NULL);
  CHECK(strstr(g.request, "# EOF") == NULL); /* 0.0.4, not OpenMetrics */
  CHECK_MSG(strstr(logged, "pushgateway: the final metrics pushed to http://127.0.0.1:") != NULL &&
                strstr(logged, "(job \"my app/1\", instance \"ci 1\")") != NULL,
            "the log:\n%s", logged);
}

static void test_silent_gateway_bounded(void) {
  gateway g;
  gateway_start(&g, 0);
  char url[64];
  snprintf(url, sizeof(url), "http://127.0.0.1:%u", (unsigned)g.port);
  double took = run_with_push(url, "silent", NULL);
  shutdown(g.listener, SHUT_RDWR);
  pthread_join(g.thread, NULL);
  close(g.listener);
  CHECK_MSG(took < 2.6, "lagscope_stop took %.3f s with a gateway that never answers", took);
  CHECK_MSG(strstr(logged, "the metrics were not pushed to") != NULL &&
                strstr(logged, "no answer within 2 s") != NULL,
            "the log:\n%s", logged);
  CHECK(strstr(g.request, "PUT /metrics/job/silent/instance/") == g.request); /* host:pid */
  printf("lagscope_stop took %.3f s with a gateway that never answers\n", took);
}

static void test_refused_at_once(void) {
  gateway g;
  gateway_start(&g, 0); /* its port, then closed: refused */
  char url[64];
  snprintf(url, sizeof(url), "http://127.0.0.1:%u", (unsigned)g.port);
  shutdown(g.listener, SHUT_RDWR);
  pthread_join(g.thread, NULL);
  close(g.listener);
  double took = run_with_push(url, "refused", NULL);
  CHECK_MSG(took < 1.0, "lagscope_stop took %.3f s with a refused port", took);
  CHECK_MSG(strstr(logged, "the metrics were not pushed to") != NULL &&
                strstr(logged, "refused") != NULL, "the log:\n%s", logged);
}

static const test_case cases[] = {
    TEST_CASE(pushed_at_stop),
    TEST_CASE(silent_gateway_bounded),
    TEST_CASE(refused_at_once),
};

int main(int argc, char **argv) { return run_test_case(argc, argv, cases, CASE_COUNT(cases)); }
