/*
 * bench_web — what the LAN viewer's server sustains, and whether the app's main thread notices.
 *
 * One process, as in an app: lagscope runs with its server on (loopback, any free port,
 * server_max_clients 80 so that 64 keep-alive connections fit) and a 60 Hz main loop on the
 * main thread presents frames (lagscope_frame) and answers lagscope's pings through post_main.
 * Beside it, a second civetweb context with the same worker and keep-alive options as
 * web/server.c answers one route with a static JSON body: the status answer captured once, with
 * the same headers. That is the baseline: civetweb itself, with nothing of lagscope's work.
 *
 * Four periods of the same loop, each N seconds:
 *   1. quiet: no load;
 *   2. wrk -t2 -c64 --latency against GET /api/v1/status (bearer token);
 *   3. the same wrk against the static baseline;
 *   4. the same wrk against a third context, the baseline without civetweb's tcp_nodelay option
 *      (which server.c sets): for reference, what an answer's two writes (headers, body) cost
 *      when Nagle's algorithm holds the body for the client's delayed ACK (~40 ms on Linux).
 * wrk runs from a helper thread (popen) so that the main thread keeps looping. Printed: wrk's
 * requests/s and latency (avg, p99, max), non-2xx answers and socket errors for each server, and
 * the main loop's frame intervals (p50, p99, max) and frames missed in each period.
 *
 * Skipped (77) when wrk is not installed or lagscope is compiled out.
 *
 * Usage: bench_web [--seconds N]   (N seconds per period; default 10)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "bench.h"
#include "bench_post.h"

#include <civetweb.h>
#include <lagscope.h>

#include "http.h" /* the viewer's security headers */

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define FRAME_NS (1000000000u / 60u)
#define MAX_CLIENTS 80u          /* lagscope's server_max_clients: 64 keep-alive fit */
#define SPARE_THREADS 2u         /* web/server.c: num_threads = server_max_clients + 2 */
#define CONNECTIONS 64
#define BODY_MAX 8192

/* ---- the 60 Hz loop, recording frame intervals -------------------------------------------- */
typedef struct frames {
  double *interval_ms; /* between consecutive presents */
  size_t count, capacity;
  uint64_t missed;     /* frame periods that passed without a present */
} frames;

static void wait_until(uint64_t deadline_ns) {
  uint64_t now = bench_now_ns();
  if (now >= deadline_ns) return;
  uint64_t left = deadline_ns - now;
  struct timespec timeout = {(time_t)(left / 1000000000u), (long)(left % 1000000000u)};
  struct pollfd fd = {.fd = bench_post_queue.wake_fd, .events = POLLIN};
  ppoll(&fd, 1, &timeout, NULL);
}

/* Runs frames until *done is set (a wrk run finished) or, with done NULL, for seconds. */
static void run_loop(frames *out, atomic_bool *done, unsigned seconds) {
  uint64_t now = bench_now_ns(), end = now + (uint64_t)seconds * 1000000000u;
  uint64_t deadline = now + FRAME_NS, last_present = 0;
  for (;;) {
    if (done != NULL ? atomic_load(done) : now >= end) break;
    wait_until(deadline);
    bench_post_drain();
    now = bench_now_ns();
    if (now < deadline) continue; /* woken by a post */
    lagscope_frame();
    if (last_present != 0 && out->count < out->capacity) {
      uint64_t interval = now - last_present;
      out->interval_ms[out->count++] = (double)interval / 1e6;
      /* A present 2 periods after the last one missed one frame, and so on. */
      uint64_t periods = (interval + FRAME_NS / 2) / FRAME_NS;
      if (periods > 1) out->missed += periods - 1;
    }
    last_present = now;
    deadline += FRAME_NS;
    if (deadline <= now) deadline = now + FRAME_NS; /* fell behind: skip, don't burst */
  }
}

typedef struct frame_stats {
  size_t frames;
  double p50, p99, max;
  uint64_t missed;
} frame_stats;

static double percentile(const double *sorted, size_t n, double p) {
  if (n == 0) return 0.0;
  size_t i = (size_t)(p * (double)(n - 1) + 0.5);
  return sorted[i < n ? i : n - 1];
}

static frame_stats summarize(frames *f) {
  frame_stats s = {f->count, 0, 0, 0, f->missed};
  qsort(f->interval_ms, f->count, sizeof(double), bench_compare_doubles);
  s.p50 = percentile(f->interval_ms, f->count, 0.50);
  s.p99 = percentile(f->interval_ms, f->count, 0.99);
  s.max = f->count > 0 ? f->interval_ms[f->count - 1] : 0.0;
  return s;
}

/* ---- a tiny HTTP client (status reads) ----------------------------------------------------- */
/* GET path with the bearer token; the body (NUL-terminated) into body. Returns the status, or
 * -1 when the request failed. */
static int http_get(uint16_t port, const char *path, const char *token, char *body, size_t size) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(port)};
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  struct timeval timeout = {5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  char request[512];
  int n = snprintf(request, sizeof request,
                   "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nAuthorization: Bearer %s\r\n"
                   "Connection: close\r\n\r\n", path, (unsigned)port, token);
  static char reply[BODY_MAX * 2];
  size_t used = 0;
  if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0 ||
      send(fd, request, (size_t)n, MSG_NOSIGNAL) != n) {
    close(fd);
    return -1;
  }
  for (;;) {
    ssize_t got = recv(fd, reply + used, sizeof reply - 1 - used, 0);
    if (got <= 0) break;
    used += (size_t)got;
    if (used == sizeof reply - 1) break;
  }
  close(fd);
  reply[used] = '\0';
  int status = 0;
  const char *headers_end = strstr(reply, "\r\n\r\n");
  if (sscanf(reply, "HTTP/1.%*d %d", &status) != 1 || headers_end == NULL) return -1;
  snprintf(body, size, "%s", headers_end + 4);
  return status;
}

/* The number after "\"name\":" in a JSON text (first occurrence after from), or 0. */
static double json_number(const char *json, const char *from, const char *name) {
  const char *p = from != NULL ? strstr(json, from) : json;
  char key[64];
  snprintf(key, sizeof key, "\"%s\":", name);
  p = p != NULL ? strstr(p, key) : NULL;
  return p != NULL ? strtod(p + strlen(key), NULL) : 0.0;
}

/* ---- the baseline: civetweb with one static answer ----------------------------------------- */

static struct {
  char body[BODY_MAX];
  size_t length;
  char length_text[24];
  _Atomic uint64_t requests;
} static_answer;

static int static_handler(struct mg_connection *conn, void *data) {
  (void)data;
  atomic_fetch_add_explicit(&static_answer.requests, 1, memory_order_relaxed);
  mg_response_header_start(conn, 200);
  mg_response_header_add(conn, "Content-Type", "application/json; charset=utf-8", -1);
  mg_response_header_add(conn, "Content-Length", static_answer.length_text, -1);
  lagscope__web_reply_add_security_headers(conn); /* the viewer's own, so both send the same */
  mg_response_header_send(conn);
  mg_write(conn, static_answer.body, static_answer.length);
  return 200;
}

static int quiet_log(const struct mg_connection *conn, const char *message) {
  (void)conn;
  (void)message;
  return 1;
}

/* The options of web/server.c's start_civetweb (keep them in step), on loopback and any free
 * port; without nodelay (the reference context) tcp_nodelay is left off. */
static struct mg_context *start_baseline(uint16_t *port, int nodelay) {
  char threads[16];
  snprintf(threads, sizeof threads, "%u", MAX_CLIENTS + SPARE_THREADS);
  const char *options[] = {"listening_ports", "127.0.0.1:0",
                           "num_threads", threads,
                           "request_timeout_ms", "10000",
                           "keep_alive_timeout_ms", "2000",
                           "enable_keep_alive", "yes",
                           "max_request_size", "16384",
                           "enable_directory_listing", "no",
                           "access_control_allow_origin", "",
                           "access_control_allow_methods", "",
                           "access_control_allow_headers", "",
                           "enable_auth_domain_check", "no",
                           nodelay ? "tcp_nodelay" : NULL, "1",
                           NULL};
  struct mg_callbacks callbacks;
  memset(&callbacks, 0, sizeof callbacks);
  callbacks.log_message = quiet_log;
  struct mg_context *ctx = mg_start(&callbacks, NULL, options);
  if (ctx == NULL) return NULL;
  mg_set_request_handler(ctx, "/", static_handler, NULL);
  struct mg_server_port bound[1];
  if (mg_get_server_ports(ctx, 1, bound) < 1) {
    mg_stop(ctx);
    return NULL;
  }
  *port = (uint16_t)bound[0].port;
  return ctx;
}

/* ---- wrk ------------------------------------------------------------------------------------ */
typedef struct wrk_result {
  int ran;                   /* wrk ran and printed Requests/sec */
  double requests_per_s;
  double latency_avg_ms, latency_p99_ms, latency_max_ms;
  uint64_t requests, non_2xx; /* non_2xx: wrk's "Non-2xx or 3xx responses" (status >= 400) */
  uint64_t err_connect, err_read, err_write, err_timeout;
  char output[4096];
} wrk_result;

typedef struct wrk_job {
  char command[512];
  wrk_result result;
  atomic_bool done;
} wrk_job;

static int find_wrk(void) {
  const char *path = getenv("PATH");
  char dir[4096], file[4200];
  while (path != NULL && *path != '\0') {
    size_t len = strcspn(path, ":");
    snprintf(dir, sizeof dir, "%.*s", (int)len, path);
    snprintf(file, sizeof file, "%s/wrk", dir[0] != '\0' ? dir : ".");
    if (access(file, X_OK) == 0) return 0;
    path += len + (path[len] == ':');
  }
  return -1;
}

/* "652.13us", "1.20ms", "2.00s", "1.00m" in ms. */
static double wrk_time_ms(const char *text) {
  char *end = NULL;
  double v = strtod(text, &end);
  if (end == NULL || end == text) return 0.0;
  if (strncmp(end, "us", 2) == 0) return v / 1000.0;
  if (strncmp(end, "ms", 2) == 0) return v;
  if (strncmp(end, "s", 1) == 0) return v * 1000.0;
  if (strncmp(end, "m", 1) == 0) return v * 60000.0;
  if (strncmp(end, "h", 1) == 0) return v * 3600000.0;
  return v;
}

static void parse_wrk(wrk_result *r) {
  char *save = NULL, copy[sizeof r->output];
  snprintf(copy, sizeof copy, "%s", r->output);
  for (char *line = strtok_r(copy, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
    while (*line == ' ' || *line == '\t') line++;
    char a[32], b[32], c[32];
    unsigned long long n;
    double rate;
    if (sscanf(line, "Latency %31s %31s %31s", a, b, c) == 3) {
      r->latency_avg_ms = wrk_time_ms(a);
      r->latency_max_ms = wrk_time_ms(c);
    } else if (sscanf(line, "99%% %31s", a) == 1) {
      r->latency_p99_ms = wrk_time_ms(a);
    } else if (sscanf(line, "%llu requests in", &n) == 1) {
      r->requests = n;
    } else if (sscanf(line, "Non-2xx or 3xx responses: %llu", &n) == 1) {
      r->non_2xx = n;
    } else if (strncmp(line, "Socket errors:", 14) == 0) {
      unsigned long long e[4];
      if (sscanf(line, "Socket errors: connect %llu, read %llu, write %llu, timeout %llu", &e[0],
                 &e[1], &e[2], &e[3]) == 4) {
        r->err_connect = e[0], r->err_read = e[1], r->err_write = e[2], r->err_timeout = e[3];
      }
    } else if (sscanf(line, "Requests/sec: %lf", &rate) == 1) {
      r->requests_per_s = rate;
      r->ran = 1;
    }
  }
}

static void *wrk_thread(void *arg) {
  wrk_job *job = arg;
  FILE *pipe = popen(job->command, "r");
  if (pipe != NULL) {
    size_t used = 0, n;
    size_t room = sizeof job->result.output - 1;
    while (used < room && (n = fread(job->result.output + used, 1, room - used, pipe)) > 0)
      used += n;
    job->result.output[used] = '\0';
    pclose(pipe);
    parse_wrk(&job->result);
  }
  atomic_store(&job->done, true);
  return NULL;
}

/* Runs wrk on a helper thread while the main thread runs the frame loop. */
static int load_period(const char *url, const char *token, unsigned seconds, frames *f,
                       wrk_result *out) {
  static wrk_job job;
  memset(&job, 0, sizeof job);
  snprintf(job.command, sizeof job.command,
           "wrk -t2 -c%d -d%us --latency -H 'Authorization: Bearer %s' %s 2>&1", CONNECTIONS,
           seconds, token, url);
  pthread_t thread;
  if (pthread_create(&thread, NULL, wrk_thread, &job) != 0) return -1;
  run_loop(f, &job.done, 0);
  pthread_join(thread, NULL);
  *out = job.result;
  if (!out->ran) {
    fprintf(stderr, "bench_web: wrk printed no Requests/sec:\n%s\n", out->output);
    return -1;
  }
  return 0;
}

/* ---- the tables ------------------------------------------------------------------------------ */
enum { LOAD_STATUS, LOAD_STATIC, LOAD_NODELAY, LOADS };

static const char *const load_names[LOADS] = {"status load", "static load", "no-nodelay load"};

static void row_ms(const char *figure, double value, const char *baseline_text, double baseline,
                   const char *goal) {
  char v[32], ratio[16];
  snprintf(v, sizeof v, "%.3f ms", value);
  bench_row(figure, v, baseline_text, bench_ratio(ratio, sizeof ratio, value, baseline), goal);
}

static void wrk_rows(const char *suffix, const wrk_result *w, const wrk_result *base,
                     const char *base_name) {
  char figure[64], v[48], b[64], ratio[16];
  snprintf(figure, sizeof figure, "requests/s%s", suffix);
  snprintf(v, sizeof v, "%.0f", w->requests_per_s);
  snprintf(b, sizeof b, "%.0f %s", base->requests_per_s, base_name);
  bench_row(figure, v, b, bench_ratio(ratio, sizeof ratio, w->requests_per_s,
                                      base->requests_per_s), "-");
  snprintf(figure, sizeof figure, "latency avg%s", suffix);
  snprintf(b, sizeof b, "%.3f ms %s", base->latency_avg_ms, base_name);
  row_ms(figure, w->latency_avg_ms, b, base->latency_avg_ms, "-");
  snprintf(figure, sizeof figure, "latency p99%s", suffix);
  snprintf(b, sizeof b, "%.3f ms %s", base->latency_p99_ms, base_name);
  row_ms(figure, w->latency_p99_ms, b, base->latency_p99_ms, "-");
  snprintf(figure, sizeof figure, "latency max%s", suffix);
  snprintf(b, sizeof b, "%.3f ms %s", base->latency_max_ms, base_name);
  row_ms(figure, w->latency_max_ms, b, base->latency_max_ms, "-");
  snprintf(figure, sizeof figure, "requests completed%s", suffix);
  snprintf(v, sizeof v, "%llu", (unsigned long long)w->requests);
  snprintf(b, sizeof b, "%llu %s", (unsigned long long)base->requests, base_name);
  bench_row(figure, v, b, "-", "-");
  snprintf(figure, sizeof figure, "non-2xx answers%s", suffix);
  snprintf(v, sizeof v, "%llu", (unsigned long long)w->non_2xx);
  snprintf(b, sizeof b, "%llu %s", (unsigned long long)base->non_2xx, base_name);
  bench_row(figure, v, b, "-", "0");
  snprintf(figure, sizeof figure, "socket errors c/r/w/timeout%s", suffix);
  snprintf(v, sizeof v, "%llu/%llu/%llu/%llu", (unsigned long long)w->err_connect,
           (unsigned long long)w->err_read, (unsigned long long)w->err_write,
           (unsigned long long)w->err_timeout);
  snprintf(b, sizeof b, "%llu/%llu/%llu/%llu %s", (unsigned long long)base->err_connect,
           (unsigned long long)base->err_read, (unsigned long long)base->err_write,
           (unsigned long long)base->err_timeout, base_name);
  bench_row(figure, v, b, "-", "0");
}

static void print_server_table(unsigned seconds, const wrk_result w[LOADS], size_t body_size,
                               uint64_t served, uint64_t rejected) {
  char title[200], v[48];
  snprintf(title, sizeof title,
           "GET /api/v1/status, wrk -t2 -c%d %u s on loopback, vs civetweb with web/server.c's "
           "options answering a static %zu-byte body", CONNECTIONS, seconds, body_size);
  bench_table_begin(title);
  wrk_rows("", &w[LOAD_STATUS], &w[LOAD_STATIC], "static");
  snprintf(v, sizeof v, "%llu", (unsigned long long)served);
  bench_row("  requests the server counted (status)", v, "-", "-", "-");
  snprintf(v, sizeof v, "%llu", (unsigned long long)rejected);
  bench_row("  clients_rejected (503 busy)", v, "-", "-", "0");
  printf("reference: the static answer without tcp_nodelay (server.c sets it): Nagle's cost\n");
  wrk_rows(" (no nodelay)", &w[LOAD_NODELAY], &w[LOAD_STATIC], "static");
}

static void frame_rows(const char *what, const frame_stats *s, const frame_stats *quiet) {
  char figure[80], b[48], v[32];
  snprintf(figure, sizeof figure, "frame interval p50, %s", what);
  snprintf(b, sizeof b, "%.3f ms no load", quiet->p50);
  row_ms(figure, s->p50, b, quiet->p50, "16.667 ms");
  snprintf(figure, sizeof figure, "frame interval p99, %s", what);
  snprintf(b, sizeof b, "%.3f ms no load", quiet->p99);
  row_ms(figure, s->p99, b, quiet->p99, "-");
  snprintf(figure, sizeof figure, "frame interval max, %s", what);
  snprintf(b, sizeof b, "%.3f ms no load", quiet->max);
  row_ms(figure, s->max, b, quiet->max, "-");
  snprintf(figure, sizeof figure, "frames missed/presented, %s", what);
  snprintf(v, sizeof v, "%llu / %zu", (unsigned long long)s->missed, s->frames);
  snprintf(b, sizeof b, "%llu / %zu no load", (unsigned long long)quiet->missed, quiet->frames);
  bench_row(figure, v, b, "-", "0 missed");
}

static void print_frame_table(const frame_stats *quiet, const frame_stats loads[LOADS],
                              uint64_t hangs) {
  bench_table_begin("the 60 Hz main loop's frame intervals during each load, vs no load");
  for (int i = 0; i < LOADS; i++) frame_rows(load_names[i], &loads[i], quiet);
  char v[32];
  snprintf(v, sizeof v, "%llu", (unsigned long long)hangs);
  bench_row("hangs lagscope reported", v, "-", "-", "0");
  printf("note: static and no-nodelay loads are the same wrk against civetweb alone: what the load\n"
         "      costs the machine (2 cores shared with wrk), whoever serves it.\n");
}

/* ---- main ----------------------------------------------------------------------------------- */
static int frames_init(frames *f, unsigned seconds) {
  f->capacity = (size_t)seconds * 60u * 2u + 600u; /* wrk may run a little past N s */
  f->interval_ms = calloc(f->capacity, sizeof(double));
  f->count = 0;
  f->missed = 0;
  return f->interval_ms != NULL ? 0 : -1;
}

int main(int argc, char **argv) {
  unsigned seconds = bench_arg_uint(argc, argv, "--seconds", 10, 1);
  if (find_wrk() != 0) {
    printf("bench_web: skipped, wrk is not installed (Debian: apt-get install wrk)\n");
    return BENCH_SKIP;
  }
  bench_post_open();
  if (bench_post_queue.wake_fd < 0) {
    perror("bench_web: eventfd");
    return 1;
  }
  lagscope_config config = lagscope_config_default();
  config.post_main = bench_post_main;
  config.server = 1;
  config.server_port = 0;
  config.server_bind = "127.0.0.1";
  config.server_max_clients = MAX_CLIENTS;
  int rc = lagscope_start(&config);
  if (rc == LAGSCOPE_DISABLED) {
    printf("bench_web: skipped, lagscope is compiled out of this build\n");
    bench_post_close();
    return BENCH_SKIP;
  }
  if (rc != 0) {
    fprintf(stderr, "bench_web: lagscope_start: %s\n", lagscope_strerror(rc));
    bench_post_close();
    return 1;
  }

  int status = 1, civetweb_held = 0;
  struct mg_context *contexts[2] = {NULL, NULL}; /* static, static without tcp_nodelay */
  uint16_t ports[LOADS] = {0};
  frames quiet_f = {0}, load_f[LOADS] = {{0}};
  wrk_result load_w[LOADS];
  char url[256], token[64] = "", body[BODY_MAX];
  unsigned port = 0;
  rc = lagscope_viewer_url(url, sizeof url);
  const char *at = rc == 0 ? strstr(url, "token=") : NULL;
  if (rc != 0 || at == NULL || sscanf(url, "http://%*[^:]:%u/", &port) != 1) {
    fprintf(stderr, "bench_web: no viewer URL (%s)\n", lagscope_strerror(rc));
    goto out;
  }
  snprintf(token, sizeof token, "%s", at + 6);
  ports[LOAD_STATUS] = (uint16_t)port;
  if (http_get(ports[LOAD_STATUS], "/api/v1/status", token, body, sizeof body) != 200) {
    fprintf(stderr, "bench_web: GET /api/v1/status did not answer 200\n");
    goto out;
  }
  /* The baseline answers the status body as it was once: the same size, the same headers. */
  static_answer.length = strlen(body);
  memcpy(static_answer.body, body, static_answer.length);
  snprintf(static_answer.length_text, sizeof static_answer.length_text, "%zu",
           static_answer.length);
  double requests0 = json_number(body, "\"server\"", "requests");
  double rejected0 = json_number(body, "\"server\"", "clients_rejected");

  mg_init_library(0); /* counted: lagscope's server holds its own reference */
  civetweb_held = 1;
  for (int i = 0; i < 2; i++) {
    contexts[i] = start_baseline(&ports[LOAD_STATIC + i], i == 0);
    if (contexts[i] == NULL) {
      fprintf(stderr, "bench_web: the baseline civetweb did not start\n");
      goto out;
    }
  }
  if (frames_init(&quiet_f, seconds) != 0) goto out;
  for (int i = 0; i < LOADS; i++)
    if (frames_init(&load_f[i], seconds) != 0) goto out;

  printf("bench_web: %u s quiet, then %u s of wrk each on /api/v1/status, the static baseline "
         "and the static baseline without tcp_nodelay...\n", seconds, seconds);
  fflush(stdout);
  frames warm_up = {0}; /* lagscope's first second (its start) is not what an app lives with */
  run_loop(&warm_up, NULL, 1);
  run_loop(&quiet_f, NULL, seconds);
  for (int i = 0; i < LOADS; i++) {
    char load_url[128];
    snprintf(load_url, sizeof load_url, "http://127.0.0.1:%u/api/v1/status", (unsigned)ports[i]);
    if (load_period(load_url, token, seconds, &load_f[i], &load_w[i]) != 0) goto out;
  }

  if (http_get(ports[LOAD_STATUS], "/api/v1/status", token, body, sizeof body) != 200) {
    fprintf(stderr, "bench_web: GET /api/v1/status did not answer 200 after the load\n");
    goto out;
  }
  /* Minus 1: the request that reads the figure counts itself. */
  uint64_t served = (uint64_t)(json_number(body, "\"server\"", "requests") - requests0 - 1);
  uint64_t rejected = (uint64_t)(json_number(body, "\"server\"", "clients_rejected") - rejected0);
  lagscope_metrics m;
  uint64_t hangs = lagscope_metrics_latest(&m) == 0 ? m.hangs : 0;

  frame_stats quiet_s = summarize(&quiet_f), load_s[LOADS];
  for (int i = 0; i < LOADS; i++) load_s[i] = summarize(&load_f[i]);
  print_server_table(seconds, load_w, static_answer.length, served, rejected);
  print_frame_table(&quiet_s, load_s, hangs);
  status = 0;

out:
  for (int i = 0; i < 2; i++)
    if (contexts[i] != NULL) mg_stop(contexts[i]);
  if (civetweb_held) mg_exit_library();
  lagscope_stop();
  bench_post_close();
  free(quiet_f.interval_ms);
  for (int i = 0; i < LOADS; i++) free(load_f[i].interval_ms);
  return status;
}
