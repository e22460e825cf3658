/*
 * bench_stream — the viewer's live stream under 16 clients: every event delivered to each, no
 * drops, memory flat.
 *
 * One process, as in an app: lagscope with its server on (loopback, any free port), metrics
 * every 50 ms (20 events a second) and a 60 Hz main loop on the main thread that answers
 * lagscope's pings through post_main and, every 2 s, stalls for 300 ms in a busy loop. With the
 * hang threshold at 100 ms each stall is a hang of about 200 ms: hang_began, a hang_sample every
 * 100 ms while it lasts, hang_ended. So the stream carries real traffic of every kind.
 *
 * 16 client threads each open GET /api/v1/stream with the bearer token over a plain socket and
 * read it as fast as it comes, counting the Server-Sent Events they receive ("event:" blocks;
 * the hello excluded) and keeping each one's id (the bus sequence). What was published is counted
 * by a subscriber of our own (config.on_event, registered with start: it misses nothing), which
 * sees every bus event, as the stream does. Compared over one window, from the first event every
 * client had to the last event published when the time was up (the clients are then given time
 * to catch up): delivered per client (min/avg/max) against published, by type too, and the
 * server's own counters (stream_events_sent, stream_events_dropped, stream_clients_dropped).
 *
 * Memory, sampled every second while the clients read: the process RSS (/proc/self/statm) and
 * lagscope's own heap (monitor_memory_bytes): first, max, last, and the slope over the second
 * half (flat is ~0). The baseline is the same figures just before the clients connected.
 * The heap's growth is the stream's backlog (web/stream.c): the last STREAM_BACKLOG messages
 * are kept for clients that fall behind, whether or not anyone is behind. So the bench also
 * prints what that ring holds (the last STREAM_BACKLOG events a client received, each at the
 * block lagscope's heap took for it) and the heap without it, which must be flat, and the bound
 * the heap cannot pass: the heap before the clients plus (STREAM_BACKLOG + clients + 1) times
 * the largest message (the ring full, one message held by each client's write, one being
 * published).
 *
 * Usage: bench_stream [--seconds N] [--clients N]   (default 60 s, 16 clients)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "bench.h"
#include "bench_temp.h"
#include "bench_post.h"
#include "internal.h" /* lagscope__memory_block_bytes */

#include <lagscope.h>

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
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define FRAME_NS (1000000000u / 60u)
#define NS_PER_MS 1000000u
#define USAGE_INTERVAL_MS 50u   /* metrics: 20 events a second */
#define HANG_THRESHOLD_MS 100u   /* a 300 ms stall is a ~200 ms hang, with samples */
#define STALL_MS 300u
#define STALL_EVERY_NS (2000u * NS_PER_MS)
#define MAX_CLIENTS 64u
#define CATCH_UP_NS (5000u * NS_PER_MS) /* the clients' time to read what was published */
#define BODY_MAX 8192
/* web/http.h's LAGSCOPE__WEB_STREAM_BACKLOG (docs/viewer-api.md: "more than 256 events
 * behind"): the messages the stream keeps. */
#define STREAM_BACKLOG 256u
/* What lagscope allocates for a message whose text a client received (web/stream.c,
 * stream_message): the text "id: <seq>\nevent: <type>\ndata: <json>\n\n" is 21 bytes and the
 * digits of seq more than json and type, the allocation 64 more than them, after a payload
 * header of a cache line (core/base/memory.c); what the heap holds for it is the block that
 * takes (lagscope__memory_block_bytes), as monitor_memory_bytes counts it. */
#define MESSAGE_EXTRA(text_bytes, digits) ((text_bytes) - 21u - (digits) + 64u + 64u)

/* ---- event types, as the stream names them ------------------------------------------------- */
/* 0 is anything else; 1.. are lagscope_event_type, which LAGSCOPE_EVENT_TYPES numbers 1..their
 * count (core/base/names.c checks it). */
#define ONE_TYPE_(name, value, text) +1
enum { TYPES = 1 LAGSCOPE_EVENT_TYPES(ONE_TYPE_) };
#undef ONE_TYPE_

static int type_index(const char *name) {
  for (int t = 1; t < TYPES; t++)
    if (strcmp(name, lagscope_event_type_name(t)) == 0) return t;
  return 0;
}

/* ---- the published side: our own subscriber -------------------------------------------------- */
static struct {
  pthread_mutex_t lock;
  uint64_t *seq;
  uint8_t *type;
  size_t count, capacity, overflow;
} published = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void on_event(const lagscope_event *event, void *user) {
  (void)user;
  pthread_mutex_lock(&published.lock);
  if (published.count < published.capacity) {
    published.seq[published.count] = event->sequence;
    int type = event->type > 0 && (int)event->type < TYPES ? (int)event->type : 0;
    published.type[published.count] = (uint8_t)type;
    published.count++;
  } else {
    published.overflow++;
  }
  pthread_mutex_unlock(&published.lock);
}

static uint64_t published_last_seq(void) {
  pthread_mutex_lock(&published.lock);
  uint64_t last = published.count > 0 ? published.seq[published.count - 1] : 0;
  pthread_mutex_unlock(&published.lock);
  return last;
}

static int hang_ended_seen(void) {
  int seen = 0;
  pthread_mutex_lock(&published.lock);
  for (size_t i = 0; i < published.count; i++)
    seen = seen || published.type[i] == LAGSCOPE_EVENT_HANG_ENDED;
  pthread_mutex_unlock(&published.lock);
  return seen;
}

/* ---- the main loop: 60 Hz, a busy stall every 2 s -------------------------------------------- */
static atomic_bool loop_stop;

/* Not inlined, so that the hang's stacks name it. */
__attribute__((noinline)) static void bench_stall_busy(uint32_t ms) {
  uint64_t end = bench_now_ns() + (uint64_t)ms * NS_PER_MS;
  while (bench_now_ns() < end) {
    __asm__ volatile("" ::: "memory");
  }
}

static void wait_until(uint64_t deadline_ns) {
  uint64_t now = bench_now_ns();
  if (now >= deadline_ns) return;
  uint64_t left = deadline_ns - now;
  struct timespec timeout = {(time_t)(left / 1000000000u), (long)(left % 1000000000u)};
  struct pollfd fd = {.fd = bench_post_queue.wake_fd, .events = POLLIN};
  ppoll(&fd, 1, &timeout, NULL);
}

static uint64_t run_loop(void) {
  uint64_t stalls = 0, now = bench_now_ns();
  uint64_t deadline = now + FRAME_NS, next_stall = now + STALL_EVERY_NS;
  while (!atomic_load(&loop_stop)) {
    wait_until(deadline);
    bench_post_drain();
    now = bench_now_ns();
    if (now < deadline) continue; /* woken by a post */
    if (now >= next_stall) {
      bench_stall_busy(STALL_MS);
      stalls++;
      next_stall += STALL_EVERY_NS;
      now = bench_now_ns();
    }
    lagscope_frame();
    deadline += FRAME_NS;
    if (deadline <= now) deadline = now + FRAME_NS;
  }
  return stalls;
}

/* ---- a stream client ------------------------------------------------------------------------ */
typedef struct client {
  pthread_t thread;
  int started;
  uint16_t port;
  const char *token;
  int http_status, chunked;
  atomic_bool hello;        /* the hello arrived: the client is in */
  atomic_bool ended;        /* the server closed the stream */
  _Atomic uint64_t last_seq;
  uint64_t *seq;            /* ids of the events received, in order */
  uint8_t *type;
  size_t count, capacity, overflow;
  uint64_t out_of_order;    /* an id not above the one before */
  uint64_t keep_alives, unnamed, bytes;
  /* the dechunker */
  int chunk_state;          /* 0 size line, 1 data, 2 the data's CRLF, 3 the last chunk came */
  uint64_t chunk_left;
  char size_line[32];
  size_t size_len;
  /* the SSE parser: the first bytes of the current line are enough */
  char line[96];
  size_t line_len;
  char event[32];
  uint64_t id;
  int has_id;
  uint32_t block_bytes;     /* the current event's text so far */
  /* the allocations of the last STREAM_BACKLOG events received: what the stream's ring holds */
  uint32_t recent[STREAM_BACKLOG];
  uint64_t recent_count, recent_sum;
  _Atomic uint64_t ring_bytes, largest;
} client;

static atomic_bool clients_stop;

/* An event's allocation in lagscope, kept in the window of the last STREAM_BACKLOG. */
static void client_count_bytes(client *c) {
  unsigned digits = 1;
  for (uint64_t v = c->id; v >= 10; v /= 10) digits++;
  uint32_t bytes =
      (uint32_t)lagscope__memory_block_bytes(MESSAGE_EXTRA(c->block_bytes, digits));
  uint32_t *slot = &c->recent[c->recent_count % STREAM_BACKLOG];
  if (c->recent_count >= STREAM_BACKLOG) c->recent_sum -= *slot;
  *slot = bytes;
  c->recent_sum += bytes;
  c->recent_count++;
  atomic_store(&c->ring_bytes, c->recent_sum);
  if (bytes > atomic_load(&c->largest)) atomic_store(&c->largest, bytes);
}

static void client_record(client *c) {
  if (c->event[0] == '\0') {
    c->unnamed++;
    return;
  }
  if (strcmp(c->event, "hello") == 0) {
    atomic_store(&c->hello, true);
    return;
  }
  uint64_t last = atomic_load(&c->last_seq);
  if (c->count > 0 && c->id <= last) c->out_of_order++;
  if (c->count < c->capacity) {
    c->seq[c->count] = c->has_id ? c->id : 0;
    c->type[c->count] = (uint8_t)type_index(c->event);
    c->count++;
  } else {
    c->overflow++;
  }
  if (c->has_id && c->id > last) atomic_store(&c->last_seq, c->id);
  if (c->has_id) client_count_bytes(c);
}

/* One byte of the event stream (after dechunking). */
static void sse_byte(client *c, char byte) {
  c->block_bytes++;
  if (byte != '\n') {
    if (byte != '\r' && c->line_len < sizeof c->line - 1) c->line[c->line_len] = byte;
    if (byte != '\r') c->line_len++;
    return;
  }
  size_t len = c->line_len < sizeof c->line - 1 ? c->line_len : sizeof c->line - 1;
  c->line[len] = '\0';
  c->line_len = 0;
  if (len == 0) { /* a blank line ends the event */
    if (c->event[0] != '\0' || c->has_id) client_record(c);
    c->event[0] = '\0';
    c->has_id = 0;
    c->block_bytes = 0;
  } else if (c->line[0] == ':') {
    c->keep_alives++;
  } else if (strncmp(c->line, "event:", 6) == 0) {
    snprintf(c->event, sizeof c->event, "%s", c->line + 6 + (c->line[6] == ' '));
  } else if (strncmp(c->line, "id:", 3) == 0) {
    c->id = strtoull(c->line + 3, NULL, 10);
    c->has_id = 1;
  }
}

/* Body bytes: through the dechunker when the answer is chunked. */
static void body_bytes(client *c, const char *data, size_t n) {
  for (size_t i = 0; i < n; i++) {
    char b = data[i];
    if (!c->chunked) {
      sse_byte(c, b);
      continue;
    }
    switch (c->chunk_state) {
      case 0:
        if (b == '\n') {
          c->size_line[c->size_len] = '\0'; /* size_len stays below the buffer's size */
          c->chunk_left = strtoull(c->size_line, NULL, 16);
          c->size_len = 0;
          c->chunk_state = c->chunk_left > 0 ? 1 : 3;
        } else if (c->size_len < sizeof c->size_line - 1) {
          c->size_line[c->size_len++] = b;
        }
        break;
      case 1:
        sse_byte(c, b);
        if (--c->chunk_left == 0) c->chunk_state = 2;
        break;
      case 2:
        if (b == '\n') c->chunk_state = 0;
        break;
      default:
        break;
    }
  }
}

static void *client_main(void *arg) {
  client *c = arg;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return NULL;
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(c->port)};
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  struct timeval timeout = {0, 200000}; /* to look at clients_stop */
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  char request[512];
  int n = snprintf(request, sizeof request,
                   "GET /api/v1/stream HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
                   "Authorization: Bearer %s\r\nAccept: text/event-stream\r\n\r\n",
                   (unsigned)c->port, c->token);
  if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0 ||
      send(fd, request, (size_t)n, MSG_NOSIGNAL) != n) {
    close(fd);
    atomic_store(&c->ended, true);
    return NULL;
  }
  char buf[16384];
  char head[4096];
  size_t head_len = 0;
  int in_body = 0;
  while (!atomic_load(&clients_stop)) {
    ssize_t got = recv(fd, buf, sizeof buf, 0);
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
    if (got <= 0) {
      atomic_store(&c->ended, true);
      break;
    }
    c->bytes += (size_t)got;
    size_t off = 0;
    if (!in_body) {
      /* The header, up to its blank line; the rest of this read is body. */
      while (off < (size_t)got && !in_body) {
        if (head_len < sizeof head - 1) head[head_len++] = buf[off];
        off++;
        if (head_len >= 4 && memcmp(head + head_len - 4, "\r\n\r\n", 4) == 0) in_body = 1;
      }
      if (in_body) {
        head[head_len] = '\0';
        sscanf(head, "HTTP/1.%*d %d", &c->http_status);
        for (char *p = head; (p = strcasestr(p, "transfer-encoding:")) != NULL; p++)
          if (strncasecmp(p + 18 + strspn(p + 18, " "), "chunked", 7) == 0) c->chunked = 1;
        if (c->http_status != 200) {
          atomic_store(&c->ended, true);
          break;
        }
      }
    }
    if (in_body) body_bytes(c, buf + off, (size_t)got - off);
  }
  close(fd);
  return NULL;
}

/* ---- a tiny HTTP client (the status route) --------------------------------------------------- */
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
  char reply[BODY_MAX * 2];
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

static uint64_t json_u64(const char *json, const char *name) {
  char key[64];
  snprintf(key, sizeof key, "\"%s\":", name);
  const char *server = strstr(json, "\"server\"");
  const char *p = server != NULL ? strstr(server, key) : NULL;
  return p != NULL ? strtoull(p + strlen(key), NULL, 10) : 0;
}

typedef struct server_counts {
  int ok;
  uint64_t stream_clients, rejected, clients_dropped, events_sent, events_dropped;
} server_counts;

static server_counts read_server(uint16_t port, const char *token) {
  server_counts s = {0};
  char body[BODY_MAX];
  if (http_get(port, "/api/v1/status", token, body, sizeof body) != 200) return s;
  s.ok = 1;
  s.stream_clients = json_u64(body, "stream_clients");
  s.rejected = json_u64(body, "stream_clients_rejected");
  s.clients_dropped = json_u64(body, "stream_clients_dropped");
  s.events_sent = json_u64(body, "stream_events_sent");
  s.events_dropped = json_u64(body, "stream_events_dropped");
  return s;
}

/* ---- memory --------------------------------------------------------------------------------- */
typedef struct mem_sample {
  double t_s;        /* since the clients were in */
  double rss_kib;    /* /proc/self/statm */
  double heap_kib;   /* monitor_memory_bytes */
  double ring_kib;   /* the stream's ring, as the first client's last STREAM_BACKLOG events */
} mem_sample;

static double rss_kib(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  unsigned long long size = 0, resident = 0;
  int n = f != NULL ? fscanf(f, "%llu %llu", &size, &resident) : 0;
  if (f != NULL) fclose(f);
  return n == 2 ? (double)resident * (double)sysconf(_SC_PAGESIZE) / 1024.0 : 0.0;
}

static double heap_kib(void) {
  lagscope_metrics m;
  return lagscope_metrics_latest(&m) == 0 ? (double)m.monitor_memory_bytes / 1024.0 : 0.0;
}

/* Least-squares slope in KiB per minute over the samples from index first on. */
static double slope_per_min(const mem_sample *s, size_t first, size_t n, int heap) {
  if (n < first + 2) return 0.0;
  double st = 0, sv = 0, stt = 0, stv = 0, k = (double)(n - first);
  for (size_t i = first; i < n; i++) {
    double v = heap == 2 ? s[i].heap_kib - s[i].ring_kib : heap ? s[i].heap_kib : s[i].rss_kib;
    st += s[i].t_s, sv += v, stt += s[i].t_s * s[i].t_s, stv += s[i].t_s * v;
  }
  double d = k * stt - st * st;
  return d > 0 ? 60.0 * (k * stv - st * sv) / d : 0.0;
}

/* ---- the run, on a controller thread (the main thread is the app's loop) --------------------- */
typedef struct run {
  unsigned seconds, nclients;
  uint16_t port;
  char token[64];
  client *clients;
  mem_sample before;          /* just before the clients connected */
  mem_sample *samples;
  size_t nsamples;
  uint64_t window_first, window_last;
  int all_in, caught_up;
  server_counts after_close;    /* the server's counters once the clients left */
  int failed;
} run;

static void sleep_ns(uint64_t ns) {
  struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

static void *controller_main(void *arg) {
  run *r = arg;
  /* The baseline once the first hang has ended and the viewer has answered a request: what
   * the first hang and the server's start leave for good (the server starts at its first
   * client: ~600 KiB of lagscope's heap that stay, whatever the number of clients) count in it,
   * not as the stream clients' growth. Then the heap is let settle (two equal readings). */
  uint64_t wait_until_ns = bench_now_ns() + 10000u * NS_PER_MS;
  while (!hang_ended_seen() && bench_now_ns() < wait_until_ns) sleep_ns(20u * NS_PER_MS);
  read_server(r->port, r->token);
  double last_heap = -1;
  wait_until_ns = bench_now_ns() + 5000u * NS_PER_MS;
  for (;;) {
    sleep_ns(500u * NS_PER_MS);
    double now_heap = heap_kib();
    if (now_heap == last_heap || bench_now_ns() > wait_until_ns) break;
    last_heap = now_heap;
  }
  r->before = (mem_sample){0, rss_kib(), heap_kib(), 0};
  for (unsigned i = 0; i < r->nclients; i++) {
    client *c = &r->clients[i];
    c->port = r->port;
    c->token = r->token;
    c->started = pthread_create(&c->thread, NULL, client_main, c) == 0;
  }
  /* In: every client has its hello (and thus its place in the stream). */
  uint64_t give_up = bench_now_ns() + 5000u * NS_PER_MS;
  for (;;) {
    unsigned in = 0;
    for (unsigned i = 0; i < r->nclients; i++) in += atomic_load(&r->clients[i].hello);
    if (in == r->nclients) {
      r->all_in = 1;
      break;
    }
    if (bench_now_ns() > give_up) break;
    sleep_ns(10u * NS_PER_MS);
  }
  if (r->all_in) {
    uint64_t t0 = bench_now_ns();
    for (unsigned s = 0; s <= r->seconds; s++) {
      uint64_t at = t0 + (uint64_t)s * 1000u * NS_PER_MS, now = bench_now_ns();
      if (at > now) sleep_ns(at - now);
      r->samples[r->nsamples++] =
          (mem_sample){(double)(bench_now_ns() - t0) / 1e9, rss_kib(), heap_kib(),
                       (double)atomic_load(&r->clients[0].ring_bytes) / 1024.0};
    }
    /* The window's end: the last event published now; then the clients catch up to it. */
    r->window_last = published_last_seq();
    give_up = bench_now_ns() + CATCH_UP_NS;
    for (;;) {
      unsigned done = 0;
      for (unsigned i = 0; i < r->nclients; i++)
        done += atomic_load(&r->clients[i].last_seq) >= r->window_last ||
                atomic_load(&r->clients[i].ended);
      if (done == r->nclients || bench_now_ns() > give_up) break;
      sleep_ns(10u * NS_PER_MS);
    }
    r->caught_up = 1;
    for (unsigned i = 0; i < r->nclients; i++)
      if (atomic_load(&r->clients[i].last_seq) < r->window_last) r->caught_up = 0;
  }
  atomic_store(&clients_stop, true);
  for (unsigned i = 0; i < r->nclients; i++)
    if (r->clients[i].started) pthread_join(r->clients[i].thread, NULL);
  /* The server notices a closed stream at its next write: the next event, within 50 ms. */
  give_up = bench_now_ns() + 3000u * NS_PER_MS;
  do {
    sleep_ns(100u * NS_PER_MS);
    r->after_close = read_server(r->port, r->token);
  } while (r->after_close.ok && r->after_close.stream_clients > 0 && bench_now_ns() < give_up);
  atomic_store(&loop_stop, true);
  return NULL;
}

/* ---- the table ------------------------------------------------------------------------------- */
static int in_window(const run *r, uint64_t seq) {
  return seq >= r->window_first && seq <= r->window_last;
}

static void print_table(const run *r, uint64_t stalls, const lagscope_metrics *m, int have_m) {
  char title[160], v[64], b[64], ratio[16];
  uint64_t pub = 0, pub_type[TYPES] = {0}, all_type[TYPES] = {0};
  pthread_mutex_lock(&published.lock);
  for (size_t i = 0; i < published.count; i++) {
    all_type[published.type[i]]++;
    if (in_window(r, published.seq[i])) pub++, pub_type[published.type[i]]++;
  }
  pthread_mutex_unlock(&published.lock);

  uint64_t dmin = UINT64_MAX, dmax = 0, dsum = 0, received = 0, out_of_order = 0, unnamed = 0;
  uint64_t dmin_type[TYPES];
  for (int t = 0; t < TYPES; t++) dmin_type[t] = UINT64_MAX;
  unsigned ended = 0, overflow = published.overflow > 0;
  for (unsigned i = 0; i < r->nclients; i++) {
    const client *c = &r->clients[i];
    uint64_t d = 0, d_type[TYPES] = {0};
    for (size_t k = 0; k < c->count; k++)
      if (in_window(r, c->seq[k])) d++, d_type[c->type[k]]++;
    for (int t = 0; t < TYPES; t++)
      if (d_type[t] < dmin_type[t]) dmin_type[t] = d_type[t];
    dmin = d < dmin ? d : dmin;
    dmax = d > dmax ? d : dmax;
    dsum += d;
    received += c->count;
    out_of_order += c->out_of_order;
    unnamed += c->unnamed;
    ended += c->started && atomic_load(&c->ended) ? 1u : 0u; /* closed by the server early */
    overflow += c->overflow > 0;
  }

  snprintf(title, sizeof title,
           "GET /api/v1/stream, %u clients for %u s, metrics every %u ms, a %u ms stall every 2 s",
           r->nclients, r->seconds, USAGE_INTERVAL_MS, STALL_MS);
  bench_table_begin(title);
  snprintf(v, sizeof v, "%llu/%.0f/%llu", (unsigned long long)dmin,
           (double)dsum / r->nclients, (unsigned long long)dmax);
  snprintf(b, sizeof b, "%llu published", (unsigned long long)pub);
  bench_row("events delivered per client min/avg/max", v, b,
            bench_ratio(ratio, sizeof ratio, (double)dmin, (double)pub), "= published");
  for (int t = 1; t < TYPES; t++) {
    if (pub_type[t] == 0 && dmin_type[t] == 0) continue;
    char figure[64];
    snprintf(figure, sizeof figure, "  %s, fewest any client had", lagscope_event_type_name(t));
    snprintf(v, sizeof v, "%llu", (unsigned long long)dmin_type[t]);
    snprintf(b, sizeof b, "%llu published", (unsigned long long)pub_type[t]);
    bench_row(figure, v, b, bench_ratio(ratio, sizeof ratio, (double)dmin_type[t],
                                        (double)pub_type[t]), "= published");
  }
  snprintf(v, sizeof v, "%llu", (unsigned long long)(pub * r->nclients - dsum));
  bench_row("events missing, all clients", v, "-", "-", "0");
  snprintf(v, sizeof v, "%llu", (unsigned long long)out_of_order);
  bench_row("events out of order or repeated", v, "-", "-", "0");
  /* The server's figures once the clients left: it counts an event sent when a stream takes
   * it, so a stream's last two (the first write to a closed socket succeeds, the second fails)
   * are sent but never received. */
  const server_counts *end = &r->after_close;
  snprintf(v, sizeof v, "%llu", (unsigned long long)end->events_sent);
  snprintf(b, sizeof b, "%llu received by clients", (unsigned long long)received);
  bench_row("server stream_events_sent", v, b, bench_ratio(ratio, sizeof ratio,
            (double)end->events_sent, (double)received), "received + <= 2/client");
  snprintf(v, sizeof v, "%llu", (unsigned long long)end->events_dropped);
  bench_row("server stream_events_dropped", v, "-", "-", "0");
  snprintf(v, sizeof v, "%llu", (unsigned long long)end->clients_dropped);
  bench_row("server stream_clients_dropped", v, "-", "-", "0");
  snprintf(v, sizeof v, "%llu", (unsigned long long)end->rejected);
  bench_row("server stream_clients_rejected", v, "-", "-", "0");
  snprintf(v, sizeof v, "%u", ended);
  bench_row("streams the server ended early", v, "-", "-", "0");
  snprintf(v, sizeof v, "%llu", (unsigned long long)unnamed);
  bench_row("blocks without an event: line", v, "-", "-", "0");
  if (overflow > 0) printf("warning: %u record(s) overflowed; counts are short\n", overflow);
  snprintf(v, sizeof v, "%llu", (unsigned long long)r->after_close.stream_clients);
  bench_row("stream_clients after the clients left", v, "-", "-", "0");
  snprintf(v, sizeof v, "%llu / %llu", (unsigned long long)all_type[LAGSCOPE_EVENT_HANG_BEGAN],
           (unsigned long long)all_type[LAGSCOPE_EVENT_HANG_ENDED]);
  snprintf(b, sizeof b, "%llu stalls of %u ms", (unsigned long long)stalls, STALL_MS);
  bench_row("hangs began / ended, whole run", v, b, "-", "= stalls");
  if (have_m) {
    snprintf(v, sizeof v, "%llu", (unsigned long long)m->events_dropped);
    bench_row("bus events_dropped (subscribers' losses)", v, "-", "-", "0");
  }

  size_t n = r->nsamples, half = n / 2;
  double rss_max = 0, heap_max = 0;
  for (size_t i = 0; i < n; i++) {
    if (r->samples[i].rss_kib > rss_max) rss_max = r->samples[i].rss_kib;
    if (r->samples[i].heap_kib > heap_max) heap_max = r->samples[i].heap_kib;
  }
  snprintf(title, sizeof title,
           "memory: process RSS (/proc/self/statm) and lagscope's heap (monitor_memory_bytes), "
           "every second while the clients read (%zu samples)", n);
  bench_table_begin(title);
  const struct {
    const char *name;
    int heap;
    double before, max;
  } kinds[2] = {{"process RSS", 0, r->before.rss_kib, rss_max},
                {"lagscope heap", 1, r->before.heap_kib, heap_max}};
  for (int k = 0; k < 2; k++) {
    const char *labels[3] = {"first", "max", "last"};
    double values[3] = {kinds[k].heap ? r->samples[0].heap_kib : r->samples[0].rss_kib,
                        kinds[k].max,
                        kinds[k].heap ? r->samples[n - 1].heap_kib : r->samples[n - 1].rss_kib};
    for (int j = 0; j < 3; j++) {
      char figure[64];
      snprintf(figure, sizeof figure, "%s, %s", kinds[k].name, labels[j]);
      snprintf(v, sizeof v, "%.0f KiB", values[j]);
      snprintf(b, sizeof b, "%.0f KiB before clients", kinds[k].before);
      bench_row(figure, v, b, bench_ratio(ratio, sizeof ratio, values[j], kinds[k].before), "-");
    }
    char figure[64];
    snprintf(figure, sizeof figure, "%s, slope over the 2nd half", kinds[k].name);
    snprintf(v, sizeof v, "%+.1f KiB/min", slope_per_min(r->samples, half, n, kinds[k].heap));
    bench_row(figure, v, "-", "-", "~0 (flat)");
  }
  /* The heap's growth is the stream's ring: the heap without it is flat, and the heap stays
   * under what a full ring of the largest message and one more per client can hold. */
  double largest = 0, ring_max = 0, rest_max = 0, rest_min = 1e300;
  for (unsigned i = 0; i < r->nclients; i++) {
    double l = (double)atomic_load(&r->clients[i].largest);
    if (l > largest) largest = l;
  }
  for (size_t i = 0; i < n; i++) {
    double rest = r->samples[i].heap_kib - r->samples[i].ring_kib;
    if (r->samples[i].ring_kib > ring_max) ring_max = r->samples[i].ring_kib;
    if (rest > rest_max) rest_max = rest;
    if (rest < rest_min) rest_min = rest;
  }
  double bound = r->before.heap_kib + (STREAM_BACKLOG + r->nclients + 1) * largest / 1024.0;
  snprintf(v, sizeof v, "%.0f KiB", ring_max);
  snprintf(b, sizeof b, "%u x %.0f B largest", STREAM_BACKLOG, largest);
  bench_row("stream ring (last 256 messages), max", v, b, "-", "<= 256 x largest");
  snprintf(v, sizeof v, "%.0f..%.0f KiB", rest_min, rest_max);
  snprintf(b, sizeof b, "%.0f KiB before clients", r->before.heap_kib);
  bench_row("lagscope heap - the ring, min..max", v, b,
            bench_ratio(ratio, sizeof ratio, rest_max, r->before.heap_kib), "~ before");
  snprintf(v, sizeof v, "%+.1f KiB/min", slope_per_min(r->samples, half, n, 2));
  bench_row("lagscope heap - the ring, slope 2nd half", v, "-", "-", "~0 (flat)");
  snprintf(v, sizeof v, "%.0f KiB", heap_max);
  snprintf(b, sizeof b, "%.0f KiB bound", bound);
  bench_row("lagscope heap, max, against its bound", v, b,
            bench_ratio(ratio, sizeof ratio, heap_max, bound), "<= 1.00x");
  printf("bound = heap before clients %.0f KiB + (%u ring + %u clients + 1) x largest message "
         "%.0f B\n", r->before.heap_kib, STREAM_BACKLOG, r->nclients, largest);
  /* The curves, coarsely: a plateau reads differently from a climb. */
  size_t step = n > 12 ? (n + 11) / 12 : 1;
  for (int k = 0; k < 3; k++) {
    printf("%s KiB every %zu s:", k == 2 ? "heap - ring" : k == 1 ? "heap" : "RSS ", step);
    for (size_t i = 0; i < n; i += step)
      printf(" %.0f", k == 2 ? r->samples[i].heap_kib - r->samples[i].ring_kib
                             : k == 1 ? r->samples[i].heap_kib : r->samples[i].rss_kib);
    printf("\n");
  }
}

/* ---- main ------------------------------------------------------------------------------------ */
/* Memory written through at once, so that the bench's own records are resident before the
 * baseline is taken and do not show as growth while the clients read. (Non-zero: a compiler may
 * fold malloc + memset 0 into calloc, which leaves the pages untouched.) */
static void *touched(size_t size) {
  void *p = malloc(size);
  if (p != NULL) memset(p, 0xff, size);
  return p;
}

int main(int argc, char **argv) {
  unsigned seconds = bench_arg_uint(argc, argv, "--seconds", 60, 2);
  unsigned nclients = bench_arg_uint(argc, argv, "--clients", 16, 1);
  if (nclients > MAX_CLIENTS) {
    fprintf(stderr, "usage: %s --clients N (1..%u)\n", argv[0], MAX_CLIENTS);
    return 2;
  }
  bench_post_open();
  char report_dir[512]; /* this run's reports, removed at the end */
  if (bench_post_queue.wake_fd < 0 ||
      bench_temp_folder(report_dir, sizeof report_dir, "bench_stream") != 0) {
    perror("bench_stream: eventfd or mkdtemp");
    return 1;
  }
  /* Everything published: ~22 a second, with room for what a slow machine adds. */
  published.capacity = ((size_t)seconds + 30u) * 60u;
  published.seq = touched(published.capacity * sizeof(uint64_t));
  published.type = touched(published.capacity);
  run r = {.seconds = seconds, .nclients = nclients};
  r.clients = calloc(nclients, sizeof(client));
  r.samples = calloc((size_t)seconds + 2u, sizeof(mem_sample));
  int ok = published.seq != NULL && published.type != NULL && r.clients != NULL &&
           r.samples != NULL;
  for (unsigned i = 0; ok && i < nclients; i++) {
    r.clients[i].capacity = published.capacity;
    r.clients[i].seq = touched(published.capacity * sizeof(uint64_t));
    r.clients[i].type = touched(published.capacity);
    ok = r.clients[i].seq != NULL && r.clients[i].type != NULL;
  }

  int status = 1, running = 0;
  if (!ok) {
    fprintf(stderr, "bench_stream: out of memory\n");
    goto out;
  }
  lagscope_config config = lagscope_config_default();
  config.post_main = bench_post_main;
  config.on_event = on_event;
  config.usage_interval_ms = USAGE_INTERVAL_MS;
  config.hang_threshold_ms = HANG_THRESHOLD_MS;
  config.report_dir = report_dir;
  config.server = 1;
  config.server_port = 0;
  config.server_bind = "127.0.0.1";
  config.server_max_stream_clients = nclients;
  config.server_max_clients = nclients + 16u > 32u ? nclients + 16u : 32u;
  int rc = lagscope_start(&config);
  if (rc == LAGSCOPE_DISABLED) {
    printf("bench_stream: skipped, lagscope is compiled out of this build\n");
    status = BENCH_SKIP;
    goto out;
  }
  if (rc != 0) {
    fprintf(stderr, "bench_stream: lagscope_start: %s\n", lagscope_strerror(rc));
    goto out;
  }
  running = 1;
  char url[256];
  unsigned port = 0;
  rc = lagscope_viewer_url(url, sizeof url);
  const char *at = rc == 0 ? strstr(url, "token=") : NULL;
  if (rc != 0 || at == NULL || sscanf(url, "http://%*[^:]:%u/", &port) != 1) {
    fprintf(stderr, "bench_stream: no viewer URL (%s)\n", lagscope_strerror(rc));
    goto out;
  }
  snprintf(r.token, sizeof r.token, "%s", at + 6);
  r.port = (uint16_t)port;

  printf("bench_stream: %u stream clients for %u s...\n", nclients, seconds);
  fflush(stdout);
  pthread_t controller;
  if (pthread_create(&controller, NULL, controller_main, &r) != 0) goto out;
  uint64_t stalls = run_loop();
  pthread_join(controller, NULL);

  lagscope_metrics m;
  int have_m = lagscope_metrics_latest(&m) == 0;
  rc = lagscope_stop();
  running = 0;
  if (!r.all_in) {
    fprintf(stderr, "bench_stream: not every client got into the stream (HTTP status of the "
                    "first: %d)\n", r.clients[0].http_status);
    goto out;
  }
  /* The window starts at the first event every client had. */
  for (unsigned i = 0; i < nclients; i++)
    if (r.clients[i].count > 0 && r.clients[i].seq[0] > r.window_first)
      r.window_first = r.clients[i].seq[0];
  print_table(&r, stalls, &m, have_m);
  printf("note: window = events %llu..%llu (bus sequence); clients caught up: %s; the answer "
         "was %s.\n",
         (unsigned long long)r.window_first, (unsigned long long)r.window_last,
         r.caught_up ? "yes" : "NO (5 s)", r.clients[0].chunked ? "chunked" : "not chunked");
  status = rc == 0 ? 0 : 1;

out:
  if (running) lagscope_stop();
  bench_remove_folder(report_dir);
  bench_post_close();
  for (unsigned i = 0; r.clients != NULL && i < nclients; i++) {
    free(r.clients[i].seq);
    free(r.clients[i].type);
  }
  free(r.clients);
  free(r.samples);
  free(published.seq);
  free(published.type);
  return status;
}
