/*
 * The live stream: Server-Sent Events. Each event is formatted once into a reference-counted
 * message and kept in a ring of the last LAGSCOPE__WEB_STREAM_BACKLOG; each client is a civetweb
 * worker that follows the ring at its own pace. A client that falls a whole ring behind (it
 * reads too slowly, or not at all) is disconnected and counted; nobody else waits for it, and
 * the publisher (the web's subscriber thread) never waits for a client.
 */
#define _GNU_SOURCE
#include "civetweb_calls.h"
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define KEEP_ALIVE_S 15 /* a comment line this often keeps proxies and browsers from giving up */
#define STREAM_SEND_BUFFER (32 * 1024) /* bytes; the kernel doubles it */
#define STUCK_WRITE_NS (5000ull * 1000 * 1000) /* half civetweb's write timeout */

struct lagscope__web_stream {
  pthread_mutex_t lock;
  pthread_cond_t changed;
  char *ring[LAGSCOPE__WEB_STREAM_BACKLOG]; /* payloads (lagscope__payload_new): retain to read */
  uint64_t head;                        /* messages published, ever */
  int closing;
  uint32_t max_clients, clients;
  uint64_t clients_dropped, events_sent, events_dropped, rejected;
};

lagscope__web_stream *lagscope__web_stream_new(uint32_t max_clients) {
  lagscope__web_stream *s = lagscope__alloc(sizeof(*s));
  if (s == NULL) return NULL;
  pthread_mutex_init(&s->lock, NULL);
  pthread_cond_init(&s->changed, NULL);
  s->max_clients = max_clients;
  return s;
}

void lagscope__web_stream_free(lagscope__web_stream *s) {
  if (s == NULL) return;
  for (uint32_t i = 0; i < LAGSCOPE__WEB_STREAM_BACKLOG; i++) lagscope_release(s->ring[i]);
  pthread_cond_destroy(&s->changed);
  pthread_mutex_destroy(&s->lock);
  lagscope__dealloc(s);
}

void lagscope__web_stream_close(lagscope__web_stream *s) {
  pthread_mutex_lock(&s->lock);
  s->closing = 1;
  pthread_cond_broadcast(&s->changed);
  pthread_mutex_unlock(&s->lock);
}

void lagscope__web_stream_reopen(lagscope__web_stream *s) {
  pthread_mutex_lock(&s->lock);
  s->closing = 0;
  pthread_mutex_unlock(&s->lock);
}

/* The event as a server-sent event's text, in a payload; NULL when out of memory. A */
static char *stream_message(const char *type, uint64_t seq, const char *json) {
  size_t size = strlen(json) + strlen(type) + 64;
  char *message = lagscope__payload_new(size, NULL);
  if (message != NULL)
    snprintf(message, size, "id: %llu\nevent: %s\ndata: %s\n\n", (unsigned long long)seq, type,
             json);
  return message;
}

void lagscope__web_stream_publish(lagscope__web_stream *s, const char *type, uint64_t seq,
                                  const char *json) {
  pthread_mutex_lock(&s->lock);
  /* With no client the message is never read (a client starts at the head): not made, nor
   * kept, so that an app nobody is viewing pays for no text and holds no ring of old events.
   * Made under the lock, so that a client that joins meanwhile finds it. */
  char *message = s->clients != 0 ? stream_message(type, seq, json) : NULL;
  if (s->clients != 0 && message == NULL) { /* out of memory: the clients miss this one */
    pthread_mutex_unlock(&s->lock);
    return;
  }
  char **slot = &s->ring[s->head % LAGSCOPE__WEB_STREAM_BACKLOG];
  char *old = *slot;
  *slot = message;
  s->head++;
  pthread_cond_broadcast(&s->changed);
  pthread_mutex_unlock(&s->lock);
  lagscope_release(old);
}

void lagscope__web_stream_counts_read(lagscope__web_stream *s, lagscope__web_stream_counts *out) {
  pthread_mutex_lock(&s->lock);
  *out = (lagscope__web_stream_counts){s->clients, s->clients_dropped, s->events_sent,
                                       s->events_dropped, s->rejected};
  pthread_mutex_unlock(&s->lock);
}

static int join(lagscope__web_stream *s, uint64_t *cursor) {
  pthread_mutex_lock(&s->lock);
  int ok = !s->closing && s->clients < s->max_clients;
  if (ok) s->clients++;
  else s->rejected++;
  *cursor = s->head; /* from now on: the past is in the API */
  pthread_mutex_unlock(&s->lock);
  return ok;
}

/* A client whose write timed out (civetweb gives up after the request timeout) is dropped like
 * one that fell a whole ring behind: counted, with what it missed. */
static void leave(lagscope__web_stream *s, int write_failed, uint64_t cursor) {
  pthread_mutex_lock(&s->lock);
  s->clients--;
  if (write_failed && !s->closing) {
    s->clients_dropped++;
    s->events_dropped += s->head - cursor;
  }
  pthread_mutex_unlock(&s->lock);
}

/* civetweb does not hand out a connection's socket, and the kernel lets a stream's send buffer
 * grow to megabytes: a client that stopped reading would go unnoticed for minutes. The socket
 * is found by its two ends, and its send buffer kept small, so a stuck client blocks our write
 * within seconds and is dropped. */
static void limit_send_buffer(const struct mg_request_info *info, uint16_t local_port) {
  struct rlimit files;
  int max_fd = getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < 65536
                   ? (int)files.rlim_cur : 65536;
  for (int fd = 0; fd < max_fd; fd++) {
    struct sockaddr_in peer, local;
    socklen_t peer_len = sizeof(peer), local_len = sizeof(local);
    if (getpeername(fd, (struct sockaddr *)&peer, &peer_len) != 0 || peer.sin_family != AF_INET)
      continue;
    char address[INET_ADDRSTRLEN];
    if (ntohs(peer.sin_port) != info->remote_port ||
        inet_ntop(AF_INET, &peer.sin_addr, address, sizeof(address)) == NULL ||
        strcmp(address, info->remote_addr) != 0)
      continue;
    if (getsockname(fd, (struct sockaddr *)&local, &local_len) != 0 ||
        ntohs(local.sin_port) != local_port)
      continue;
    int size = STREAM_SEND_BUFFER;
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
    return;
  }
}

typedef enum next_kind { NEXT_MESSAGE, NEXT_KEEP_ALIVE, NEXT_CLOSING, NEXT_TOO_SLOW } next_kind;

/* Waits for the message at *cursor (retained into *message), up to the keep-alive time. */
static next_kind next(lagscope__web_stream *s, uint64_t *cursor, char **message) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until); /* the condvar's clock; only paces keep-alives */
  until.tv_sec += KEEP_ALIVE_S;
  pthread_mutex_lock(&s->lock);
  next_kind kind = NEXT_KEEP_ALIVE;
  int rc = 0;
  while (!s->closing && s->head == *cursor && rc != ETIMEDOUT)
    rc = pthread_cond_timedwait(&s->changed, &s->lock, &until);
  if (s->closing) {
    kind = NEXT_CLOSING;
  } else if (s->head - *cursor > LAGSCOPE__WEB_STREAM_BACKLOG) {
    kind = NEXT_TOO_SLOW;
    s->clients_dropped++;
    s->events_dropped += s->head - *cursor;
  } else if (s->head != *cursor) {
    kind = NEXT_MESSAGE;
    *message = s->ring[*cursor % LAGSCOPE__WEB_STREAM_BACKLOG];
    lagscope_retain(*message);
    (*cursor)++;
    s->events_sent++;
  }
  pthread_mutex_unlock(&s->lock);
  return kind;
}

static int write_text(struct mg_connection *conn, const char *text) {
  size_t len = strlen(text);
  return mg_write(conn, text, len) == (int)len;
}

static int send_hello(lagscope__web_request *req) {
  const lagscope__web *web = req->web;
  char hello[512];
  snprintf(hello, sizeof(hello),
           "retry: 2000\n\nevent: hello\ndata: {\"type\":\"hello\",\"pid\":%d,"
           "\"launch_wall_ms\":%lld,\"app\":\"%s\",\"lagscope_version\":\"%s\"}\n\n",
           (int)lagscope__process_id(), (long long)web->launch_wall_ms, web->app_name,
           LAGSCOPE_VERSION_STRING);
  return write_text(req->conn, hello);
}

int lagscope__web_stream_serve(lagscope__web_request *req) {
  lagscope__web_stream *s = req->web->stream;
  uint64_t cursor;
  if (!join(s, &cursor))
    return lagscope__web_reply_error(req, 503, "busy", "too many live streams; try again");
  mg_response_header_start(req->conn, 200);
  mg_response_header_add(req->conn, "Content-Type", "text/event-stream; charset=utf-8", -1);
  lagscope__web_reply_add_security_headers(req->conn);
  if (req->set_cookie != NULL) mg_response_header_add(req->conn, "Set-Cookie", req->set_cookie, -1);
  mg_response_header_send(req->conn);
  limit_send_buffer(mg_get_request_info(req->conn), req->web->port);
  int alive = !req->head_only && send_hello(req), write_failed = !alive && !req->head_only;
  while (alive) {
    char *message = NULL;
    next_kind kind = next(s, &cursor, &message);
    uint64_t write_start = lagscope__now_ns();
    if (kind == NEXT_MESSAGE) {
      alive = write_text(req->conn, message);
      lagscope_release(message);
    } else if (kind == NEXT_KEEP_ALIVE) {
      alive = write_text(req->conn, ": keep-alive\n\n");
    } else {
      alive = 0;
    }
    /* A write that failed at once: the client left. One that waited that long: it is stuck. */
    if (!alive && (kind == NEXT_MESSAGE || kind == NEXT_KEEP_ALIVE) &&
        lagscope__now_ns() - write_start >= STUCK_WRITE_NS)
      write_failed = 1;
  }
  leave(s, write_failed, cursor);
  return 200;
}
