/*
 * The push: at lagscope_stop, the run's final /metrics text PUT to a Prometheus Pushgateway
 * (config.pushgateway_url; lagscope-run --pushgateway), so that a run too short to be scraped
 * (a CI job) still counts. docs/viewer-api.md, "Pushing to a Pushgateway".
 *
 * A consumer on the dispatcher thread: each event is counted as /metrics counts it (quick, no
 * lock). Its stop comes after the dispatcher thread is joined, so every event was counted, the
 * final metrics one of lagscope_stop too. It writes the text and hands it to a thread of its
 * own, lagscope-push, which resolves, connects, sends and reads the answer within PUSH_BOUND_NS
 * in all; the stopping thread (the app's, at its exit) waits no longer than that. A gateway
 * down, slow or refusing costs one log line, never the app's exit nor its status.
 */
#define _POSIX_C_SOURCE 200809L
#include "http.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PUSH_BOUND_NS 2000000000ull /* resolve, connect, send and the answer: docs say 2 s */
#define PUSH_GRACE_NS 100000000ull  /* the stopping thread's margin over the thread's bound */
#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0 /* lagscope's threads block every signal: a SIGPIPE never reaches the app */
#endif

typedef struct push_state {
  lagscope__web_openmetrics counts; /* on the dispatcher thread only, then at stop */
  lagscope__http_url url;
  char url_text[320]; /* for the log line */
  char app[64];
  char instance[256];
} push_state;

/* One push, shared by the stopping thread and lagscope-push: the last to let go frees it (the
 * stopping thread gives up on a push past its bound and leaves it to the thread). */
typedef struct push_job {
  _Atomic int refs;
  lagscope__wakeup *done;
  uint64_t deadline_ns;
  lagscope__http_url url;
  char *request;
  size_t request_len;
  char result[256]; /* the log line's end, written by lagscope-push before done is posted */
} push_job;

/* ---- the request ------------------------------------------------------------------------------ */

/* A label's value as the Pushgateway reads a path segment: bytes other than letters, digits,
 * '-', '.', '_' and '~' percent-escaped; one that holds a '/' or is empty in base64url after
 * "name@base64", the gateway's rule (it does not take "%2F" for a '/'). F */
static void path_label(char *out, size_t size, const char *name, const char *value) {
  static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  static const char hex[] = "0123456789ABCDEF";
  int base64 = value[0] == '\0' || strchr(value, '/') != NULL;
  size_t n = (size_t)snprintf(out, size, "/%s%s/", name, base64 ? "@base64" : "");
  if (base64 && value[0] == '\0' && n + 1 < size) out[n++] = '=';
  for (const unsigned char *p = (const unsigned char *)value; base64 && *p != '\0'; p += 3) {
    unsigned v = (unsigned)p[0] << 16 | (p[1] != 0 ? (unsigned)p[1] << 8 : 0) |
                 (p[1] != 0 && p[2] != 0 ? p[2] : 0);
    int chars = p[1] == 0 ? 2 : p[2] == 0 ? 3 : 4;
    for (int k = 0; k < chars && n + 1 < size; k++) out[n++] = b64[(v >> (18 - 6 * k)) & 63];
    if (chars < 4) break;
  }
  for (const unsigned char *p = (const unsigned char *)value; !base64 && *p != '\0'; p++) {
    int plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                *p == '-' || *p == '.' || *p == '_' || *p == '~';
    if (plain && n + 1 < size) out[n++] = (char)*p;
    else if (!plain && n + 3 < size) {
      out[n++] = '%';
      out[n++] = hex[*p >> 4];
      out[n++] = hex[*p & 15];
    }
  }
  out[n < size ? n : size - 1] = '\0';
}

/* PUT <path>/metrics/job/<app>/instance/<instance> with the text as its body. A */
static char *request_make(const push_state *s, const char *body, size_t *len) {
  char job[200], instance[800];
  path_label(job, sizeof(job), "job", s->app);
  path_label(instance, sizeof(instance), "instance", s->instance);
  size_t body_len = strlen(body), size = body_len + 2048;
  char *request = lagscope__alloc(size);
  if (request == NULL) return NULL;
  int n = snprintf(request, size,
                   "PUT %s/metrics%s%s HTTP/1.1\r\nHost: %s:%u\r\n"
                   "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
                   "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                   s->url.path, job, instance, s->url.host, (unsigned)s->url.port, body_len);
  if (n < 0 || (size_t)n + body_len >= size) {
    lagscope__dealloc(request);
    return NULL;
  }
  memcpy(request + n, body, body_len);
  *len = (size_t)n + body_len;
  return request;
}

/* ---- the exchange, on lagscope-push ------------------------------------------------------------ */

/* Waits for events on fd until the job's deadline; 1 when they came. F */
static int wait_for(int fd, short events, uint64_t deadline_ns) {
  for (;;) {
    uint64_t now = lagscope__now_ns();
    if (now >= deadline_ns) return 0;
    struct pollfd p = {.fd = fd, .events = events};
    int rc = poll(&p, 1, (int)((deadline_ns - now + 999999) / 1000000));
    if (rc > 0) return 1;
    if (rc < 0 && errno != EINTR) return 0;
  }
}

/* A connected socket to one of the host's addresses, or -1 with the reason in the job. */
static int connect_to(push_job *job) {
  char port[8];
  snprintf(port, sizeof(port), "%u", (unsigned)job->url.port);
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *list = NULL;
  int rc = getaddrinfo(job->url.host, port, &hints, &list);
  if (rc != 0) {
    snprintf(job->result, sizeof(job->result), "%.120s: %s", job->url.host,
             gai_strerror(rc));
    return -1;
  }
  int fd = -1, err = 0;
  for (struct addrinfo *a = list; a != NULL && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) { err = errno; continue; }
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    socklen_t n = sizeof(err);
    if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) break;
    err = errno;
    if (err == EINPROGRESS && wait_for(fd, POLLOUT, job->deadline_ns) &&
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &n) == 0 && err == 0)
      break;
    if (err == EINPROGRESS) err = ETIMEDOUT;
    close(fd);
    fd = -1;
  }
  freeaddrinfo(list);
  if (fd < 0) snprintf(job->result, sizeof(job->result), "%s", strerror(err != 0 ? err : ETIMEDOUT));
  return fd;
}

/* The status line of the gateway's answer, with the start of its body when it refuses. */
static void exchange(push_job *job, int fd) {
  for (size_t sent = 0; sent < job->request_len;) {
    ssize_t n = wait_for(fd, POLLOUT, job->deadline_ns)
                    ? send(fd, job->request + sent, job->request_len - sent, MSG_NOSIGNAL) : -2;
    if (n == -1 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n < 0) {
      snprintf(job->result, sizeof(job->result), "%s",
               n == -2 ? "no answer within 2 s (sending)" : strerror(errno));
      return;
    }
    sent += (size_t)n;
  }
  char answer[512];
  size_t got = 0;
  while (got + 1 < sizeof(answer) && wait_for(fd, POLLIN, job->deadline_ns)) {
    ssize_t n = recv(fd, answer + got, sizeof(answer) - 1 - got, 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) break;
    if (n > 0) got += (size_t)n;
  }
  answer[got] = '\0';
  int status = 0;
  if (sscanf(answer, "HTTP/%*d.%*d %d", &status) != 1) {
    snprintf(job->result, sizeof(job->result), "%s", got == 0 ? "no answer within 2 s"
                                                              : "an answer that is not HTTP");
    return;
  }
  if (status >= 200 && status < 300) {
    job->result[0] = '\0'; /* pushed */
    return;
  }
  const char *body = strstr(answer, "\r\n\r\n");
  body = body != NULL ? body + 4 : "";
  snprintf(job->result, sizeof(job->result), "the gateway answered %d: %.160s", status, body);
  for (char *c = job->result; *c != '\0'; c++)
    if (*c == '\n' || *c == '\r') *c = ' ';
}

static void job_release(push_job *job) {
  if (atomic_fetch_sub(&job->refs, 1) != 1) return;
  lagscope__wakeup_free(job->done);
  lagscope__dealloc(job->request);
  lagscope__dealloc(job);
}

static void push_main(void *arg) {
  push_job *job = arg;
  int fd = connect_to(job);
  if (fd >= 0) {
    exchange(job, fd);
    close(fd);
  }
  lagscope__wakeup_post(job->done);
  job_release(job);
}

/* ---- the consumer ---------------------------------------------------------------------------- */

static int push_start(const lagscope_config *config, lagscope__dispatcher *dispatcher,
                      void **state, char *why, size_t why_size) {
  (void)dispatcher;
  if (config->pushgateway_url == NULL) return LAGSCOPE_OK; /* not wanted */
  push_state *s = lagscope__alloc(sizeof(*s));
  if (s == NULL) return LAGSCOPE_ENOMEM;
  const char *problem = lagscope__http_url_parse(config->pushgateway_url, &s->url);
  if (problem != NULL) { /* lagscope_config_validate refused it already */
    lagscope__explain(why, why_size, "%s", problem);
    lagscope__dealloc(s);
    return LAGSCOPE_EINVAL;
  }
  snprintf(s->url_text, sizeof(s->url_text), "%s", config->pushgateway_url);
  lagscope__app_name(config, s->app, sizeof(s->app));
  if (config->pushgateway_instance != NULL) {
    snprintf(s->instance, sizeof(s->instance), "%s", config->pushgateway_instance);
  } else {
    char host[200] = "";
    if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') snprintf(host, sizeof(host), "localhost");
    snprintf(s->instance, sizeof(s->instance), "%s:%ld", host, (long)lagscope__process_id());
  }
  *state = s;
  return LAGSCOPE_OK;
}

static void push_count(const lagscope_event *e, void *state) {
  lagscope__web_openmetrics_count(&((push_state *)state)->counts, e);
}

/* The job: the request made from the final counts, its wake-up, two references (the stopping
 * thread's and lagscope-push's); NULL when memory ran out. A */
static push_job *job_new(const push_state *s) {
  push_job *job = lagscope__alloc(sizeof(*job)); /* zeroed */
  if (job == NULL) return NULL;
  char *text = lagscope__web_openmetrics_text(&s->counts, s->app, lagscope__process_id(), 0);
  if (text != NULL) job->request = request_make(s, text, &job->request_len);
  lagscope__dealloc(text);
  if (job->request != NULL) job->done = lagscope__wakeup_new();
  if (job->done == NULL) {
    lagscope__dealloc(job->request);
    lagscope__dealloc(job);
    return NULL;
  }
  job->url = s->url;
  atomic_store(&job->refs, 2);
  job->deadline_ns = lagscope__now_ns() + PUSH_BOUND_NS;
  return job;
}

/* After the dispatcher thread is joined, on the thread that called lagscope_stop. */
static void push_stop(void *state) {
  push_state *s = state;
  push_job *job = job_new(s);
  lagscope__thread *thread = NULL;
  int rc = job == NULL ? LAGSCOPE_ENOMEM
                       : lagscope__thread_start(&thread, "lagscope-push", push_main, job);
  if (rc != LAGSCOPE_OK) {
    lagscope__log("pushgateway: the metrics were not pushed to %s: %s", s->url_text,
                  lagscope_strerror(rc));
    if (job != NULL) {
      atomic_store(&job->refs, 1);
      job_release(job);
    }
  } else if (lagscope__wakeup_wait_until(job->done, job->deadline_ns + PUSH_GRACE_NS)) {
    lagscope__thread_join(thread);
    if (job->result[0] == '\0')
      lagscope__log("pushgateway: the final metrics pushed to %s (job \"%s\", instance \"%s\")",
                    s->url_text, s->app, s->instance);
    else
      lagscope__log("pushgateway: the metrics were not pushed to %s: %s", s->url_text,
                    job->result);
    job_release(job);
  } else { /* a name that does not resolve in time: the thread is left to end on its own */
    lagscope__log("pushgateway: the metrics were not pushed to %s: no answer within 2 s",
                  s->url_text);
    job_release(job);
  }
  lagscope__dealloc(s);
}

const lagscope__consumer lagscope__push_consumer = {
    .name = "pushgateway",
    .delivery = LAGSCOPE__DELIVER_INLINE,
    .start = push_start,
    .on_event = push_count,
    .stop = push_stop,
};
