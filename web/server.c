/*
 * The embedded civetweb server's life: its port listens from lagscope's start, civetweb itself
 * starts at the first client (its workers are made all at once) and stops with lagscope; one
 * request handler for every path (request.c; there is no document root), access by the
 * per-launch token and bounds on clients (access.c), security headers on every answer
 * (reply.c), and bounds on header and body sizes and request time.
 *
 * Contents
 *   1. civetweb's callbacks: its threads, its messages
 *   2. lifecycle: the port, civetweb at the first client, the URL, events, stop, restart
 */
#define _GNU_SOURCE
#include "cjson_calls.h"
#include "civetweb_calls.h"
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define TEXT_OF(number) #number
#define TEXT(number) TEXT_OF(number) /* a number's macro as a string, for civetweb's options */
#define REQUEST_TIMEOUT_MS "10000" /* a request must arrive whole within this; writes too */
#define KEEP_ALIVE_MS "2000"     /* an idle keep-alive connection gives its thread back */
#define SPARE_THREADS 2          /* answer 503 to connections past the bound */
#define DEFER_ACCEPT_S 3600       /* a connection that sends nothing waits in the kernel */
#define PORT_TRIES 10            /* the configured port and the next nine (8080: 8081-8089) */
#define CIVETWEB_OWN_PORT "127.0.0.1:0" /* what civetweb opens, until it is given ours */
#define HAND_OVER_WAIT_NS (5ull * 1000000000u) /* civetweb's listening thread takes our socket */

/* ---- 1. civetweb's callbacks ------------------------------------------------------------------ */

lagscope__web *lagscope__web_of(const struct mg_connection *conn) {
  return mg_get_user_data(mg_get_context(conn));
}

/* civetweb's listening thread waits here, before its first wait for a connection, until
 * start_civetweb has registered the handler and put the viewer's socket in place of civetweb's
 * own: a client already waiting is accepted at once, and must not meet civetweb's 404. */
static void hold_listener(lagscope__web *web) {
  lagscope__wakeup_wait_until(web->listener_go, lagscope__now_ns() + HAND_OVER_WAIT_NS);
}

/* civetweb's threads work for lagscope: never captured as the app's, and they take no signal.
 * Type 0 is its listening thread. */
static void *thread_started(const struct mg_context *ctx, int thread_type) {
  lagscope__thread_adopt();
  if (thread_type == 0) hold_listener(mg_get_user_data(ctx));
  return NULL;
}

static void thread_ending(const struct mg_context *ctx, int thread_type, void *data) {
  (void)ctx;
  (void)thread_type;
  (void)data;
  lagscope__thread_disown();
}

/* civetweb's own messages (a client that timed out, a bad request line) would go to stderr:
 * they are the clients' business, not the app's. */
static int quiet(const struct mg_connection *conn, const char *message) {
  (void)conn;
  (void)message;
  return 1;
}

/* ---- 2. lifecycle --------------------------------------------------------------------------------- */

/* A connection that sends nothing is not handed to civetweb (Linux: TCP_DEFER_ACCEPT): it
 * takes no worker, however many there are (civetweb has a worker per connection, and a
 * connection that is silent would hold its worker for the whole request timeout), and it does
 * not start civetweb. The kernel keeps it for DEFER_ACCEPT_S, then hands it over if the client
 * still answers: a short period would only postpone the attack (with 10 s, 60 idle
 * connections took every worker after ~15 s). F */
static void defer_accept(lagscope__web *web) {
  lagscope__net_defer_accept(web->listener.fd, DEFER_ACCEPT_S);
}

/* A listening socket of ours on address:port (SO_REUSEADDR, as civetweb's own would have, so
 * that a port in TIME_WAIT counts as free; close-on-exec): the fd, or -1 with *error. F */
static int listen_on(const char *address, unsigned port, int *error) {
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  *error = EINVAL;
  if (inet_pton(AF_INET, address, &a.sin_addr) != 1) return -1;
  int fd = socket(AF_INET, SOCK_STREAM, 0); /* no SOCK_CLOEXEC: Darwin has none */
  if (fd < 0) return *error = errno, -1;
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  int on = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(fd, SOMAXCONN) == 0) return fd;
  *error = errno;
  close(fd);
  return -1;
}

/* The viewer's socket, listening from now on: on the configured port, or when another program
 * has it on the first free of the next ones (two instrumented apps on one machine both get a
 * viewer); 0: the OS picks. Says which port was taken and why, or why none could be. F */
static int open_listener(lagscope__web *web, char *why, size_t why_size) {
  unsigned first = web->config.server_port, last = first == 0 ? 0 : first + PORT_TRIES - 1;
  if (last > 65535) last = 65535;
  for (unsigned port = first; port <= last; port++) {
    int error = 0, fd = listen_on(web->bind, port, &error);
    if (fd >= 0) {
      struct sockaddr_in a;
      socklen_t n = sizeof(a);
      getsockname(fd, (struct sockaddr *)&a, &n);
      lagscope__owned_fd_take(&web->listener, fd);
      web->port = ntohs(a.sin_port);
      if (port != first)
        lagscope__log("viewer: port %u on %s is in use (EADDRINUSE): using port %u", first,
                      web->bind, port);
      defer_accept(web);
      return LAGSCOPE_OK;
    }
    if (error != EADDRINUSE) {
      lagscope__explain(why, why_size, "cannot listen on %s port %u: %s (errno %d)", web->bind,
                        port, strerror(error), error);
      return LAGSCOPE_ESYS;
    }
  }
  lagscope__explain(why, why_size, "ports %u to %u on %s are all in use (EADDRINUSE)", first,
                    last, web->bind);
  return LAGSCOPE_ESYS;
}

/* The fd number civetweb's listening thread polls becomes a second descriptor of the viewer's
 * socket (civetweb 1.15 takes no socket it did not open): its accepts then take from the
 * viewer's port, and whoever connected before civetweb was up is served. 0 or -1. F */
static int hand_over_listener(lagscope__web *web, lagscope__owned_fd *listener) {
  struct mg_server_port own;
  uint32_t loopback = htonl(INADDR_LOOPBACK); /* civetweb's own: CIVETWEB_OWN_PORT */
  int fd = mg_get_server_ports(web->ctx, 1, &own) == 1
               ? lagscope__net_listening_fd(loopback, htons((uint16_t)own.port)) : -1;
  int ours = lagscope__owned_fd_get(listener);
  if (fd < 0 || ours < 0 || fd == ours || lagscope__net_dup_onto(ours, fd) != 0) return -1;
  lagscope__owned_fd_close(listener); /* the socket is civetweb's now */
  return 0;
}

/* civetweb, listening on a loopback port of its own until its listening thread, held at its
 * start, is given the viewer's socket (listener) in that port's place. F */
static int start_civetweb(lagscope__web *web, lagscope__owned_fd *listener, char *why,
                          size_t why_size) {
  char threads[16];
  snprintf(threads, sizeof(threads), "%u", web->config.server_max_clients + SPARE_THREADS);
  const char *options[] = {
      "listening_ports", CIVETWEB_OWN_PORT,
      "num_threads", threads,
      "request_timeout_ms", REQUEST_TIMEOUT_MS,
      "keep_alive_timeout_ms", KEEP_ALIVE_MS,
      "enable_keep_alive", "yes",
      /* An answer is two writes (headers, body): without this the body waits ~40 ms for the
       * client's delayed ACK (bench_web: 1.4 k requests/s instead of tens of thousands). */
      "tcp_nodelay", "1",
      "max_request_size", TEXT(LAGSCOPE__WEB_HEADERS_MAX),
      "decode_url", "no", /* the handler decodes, and refuses an encoded NUL */
      "enable_directory_listing", "no",
      "access_control_allow_origin", "",
      "access_control_allow_methods", "",
      "access_control_allow_headers", "",
      "enable_auth_domain_check", "no",
      NULL};
  struct mg_callbacks callbacks;
  memset(&callbacks, 0, sizeof(callbacks));
  callbacks.init_connection = lagscope__web_access_connection_opened;
  callbacks.connection_close = lagscope__web_access_connection_closing;
  callbacks.log_message = quiet;
  callbacks.http_error = lagscope__web_request_civetweb_error;
  callbacks.init_thread = thread_started;
  callbacks.exit_thread = thread_ending;
  struct mg_init_data init = {.callbacks = &callbacks, .user_data = web,
                              .configuration_options = options};
  struct mg_error_data error = {.text = why, .text_buffer_size = why_size};
  /* Here, not at lagscope_start: not a page of civetweb or cJSON (the API's) until a client. */
  if (lagscope__civetweb_load(why, why_size) != LAGSCOPE_OK ||
      lagscope__cjson_load(why, why_size) != LAGSCOPE_OK)
    return LAGSCOPE_ESYS;
  mg_init_library(0);
  web->ctx = mg_start2(&init, &error);
  if (web->ctx == NULL) {
    mg_exit_library();
    char civetweb_said[160];
    snprintf(civetweb_said, sizeof(civetweb_said), "%.*s", (int)sizeof(civetweb_said) - 1, why);
    lagscope__explain(why, why_size, "civetweb did not start: %s",
                      civetweb_said[0] != '\0' ? civetweb_said : "no reason given");
    return LAGSCOPE_ESYS;
  }
  /* The handler's registration (under civetweb's lock) publishes what is above to the worker
   * threads; before it civetweb would answer 404 by itself. */
  mg_set_request_handler(web->ctx, "/", lagscope__web_request_handle, web);
  int handed = hand_over_listener(web, listener);
  lagscope__wakeup_post(web->listener_go); /* whether or not: mg_stop needs it going */
  if (handed == 0) return LAGSCOPE_OK;
  lagscope__explain(why, why_size, "civetweb could not be given the viewer's socket on port %u",
                    (unsigned)web->port);
  mg_stop(web->ctx);
  mg_exit_library();
  web->ctx = NULL;
  return LAGSCOPE_ESYS;
}

/* The waiter's wake pipe: close-on-exec, and neither end ever blocks. 0, or -1 with errno. F */
static int open_wake_pipe(lagscope__web *web) {
  int ends[2];
  if (pipe(ends) != 0) return -1;
  for (int i = 0; i < 2; i++) {
    fcntl(ends[i], F_SETFD, FD_CLOEXEC);
    fcntl(ends[i], F_SETFL, fcntl(ends[i], F_GETFL) | O_NONBLOCK);
  }
  lagscope__owned_fd_take(&web->wake_read, ends[0]);
  lagscope__owned_fd_take(&web->wake_write, ends[1]);
  return 0;
}

/* The viewer's socket again, on the port it has (its URL stays). Writes the listener alone:
 * the port and the config are read by other threads. 0, or ESYS with why. F */
static int listen_again(lagscope__web *web, char *why, size_t why_size) {
  int error = 0, fd = listen_on(web->bind, web->port, &error);
  if (fd < 0) {
    lagscope__explain(why, why_size, "cannot listen on %s port %u again: %s", web->bind,
                      (unsigned)web->port, strerror(error));
    return LAGSCOPE_ESYS;
  }
  lagscope__owned_fd_take(&web->listener, fd);
  defer_accept(web);
  return LAGSCOPE_OK;
}

/* The app closed the waiter's socket or pipe (a program that closes every descriptor at
 * start), or opened its own files on their numbers: they are never touched again (a byte
 * written to the pipe's number went into the app's file), and the viewer listens anew on its
 * port, said as an error event. 0, or -1 (said) when it could not. F */
static int waiter_renew(lagscope__web *web) {
  int listener = web->listener.fd, wake = web->wake_read.fd;
  lagscope__owned_fd_close(&web->listener);
  lagscope__owned_fd_close(&web->wake_read);
  lagscope__owned_fd_close(&web->wake_write);
  char why[256] = "";
  int rc = listen_again(web, why, sizeof(why));
  if (rc == LAGSCOPE_OK && open_wake_pipe(web) != 0) {
    lagscope__owned_fd_close(&web->listener);
    rc = LAGSCOPE_ESYS;
    lagscope__explain(why, sizeof(why), "no pipe: %s", strerror(errno));
  }
  if (rc == LAGSCOPE_OK)
    lagscope__publish_error(LAGSCOPE_ESYS, "viewer: the app closed or reused its descriptors "
                            "(socket %d, pipe %d): listening again on port %u", listener, wake,
                            (unsigned)web->port);
  else
    lagscope__publish_error(rc, "viewer stopped: the app closed its descriptors (socket %d, "
                            "pipe %d) and it could not listen again: %s", listener, wake, why);
  return rc == LAGSCOPE_OK ? 0 : -1;
}

static void stop_civetweb(lagscope__web *web);

/* Until a client has sent something (with TCP_DEFER_ACCEPT, not merely connected): 1 then, 0
 * when told to stop (a byte on the wake pipe, or the flag within a second) or when the
 * socket is lost for good. */
static int await_first_client(lagscope__web *web) {
  for (;;) {
    struct pollfd fds[2] = {{.fd = web->listener.fd, .events = POLLIN},
                            {.fd = web->wake_read.fd, .events = POLLIN}};
    int n = poll(fds, 2, 1000);
    if (atomic_load(&web->waiter_stop)) return 0;
    if (n < 0 && errno == EINTR) continue;
    if (!lagscope__owned_fd_is_ours(&web->listener) || !lagscope__owned_fd_is_ours(&web->wake_read) ||
        !lagscope__owned_fd_is_ours(&web->wake_write)) {
      if (waiter_renew(web) != 0) return 0;
      continue;
    }
    if (n < 0 || fds[1].revents != 0) return 0;
    if (fds[0].revents & (POLLERR | POLLHUP | POLLNVAL)) return 0; /* closed under us (iOS) */
    if (fds[0].revents & POLLIN) return 1;
  }
}

/* From the first client on, this thread and civetweb's, which it starts, hold their
 * descriptors in a table of their own (Linux): the app may close or reuse any number of its
 * own table, lagscope's among them (a daemon, a test harness), and never reach the viewer's
 * socket or its connections, nor they the app's. The new table holds the socket alone,
 * checked again there (the app may have taken its number in the moment before). 1 when apart; 0 when sharing the app's table (Darwin, said in the
 * guide; a kernel that refuses, said here), the checks before each use then all there is.
 * -1, said in why, when the socket was lost in that moment. F */
static int keep_apart(lagscope__owned_fd *listener, char *why, size_t why_size) {
  int keep[1] = {listener->fd};
  int rc = lagscope__thread_private_fds(keep, 1);
  if (rc == LAGSCOPE_ENOTSUP) return 0;
  if (rc != LAGSCOPE_OK) {
    lagscope__publish_error(rc, "viewer: no descriptor table of its own (%s): an app that closes "
                            "descriptors it did not open can cut the viewer off", strerror(errno));
    return 0;
  }
  if (lagscope__owned_fd_is_ours(listener)) return 1;
  listener->fd = -1;
  lagscope__explain(why, why_size, "the app closed or reused the viewer's socket as its first "
                    "client came");
  return -1;
}

/* civetweb serving until the viewer is told to stop (posted: no descriptor, which the app
 * could have closed in its table; the flag too), then stopped from here: in the table its
 * threads share, where the stop's poke finds their connections. */
static void serve_until_stopped(lagscope__web *web) {
  while (!atomic_load(&web->waiter_stop))
    lagscope__wakeup_wait_until(web->serving_stop, lagscope__now_ns() + 1000000000ull);
  stop_civetweb(web);
}

/* The viewer's own thread: waits for the first client, then starts civetweb and stays until
 * the viewer stops. civetweb starts at the first client, not with lagscope, because its
 * workers are made all at once (server_max_clients + 2 threads, a stack and a malloc arena
 * each: ~0.5 MiB) and an app nobody is viewing should not pay them. */
static void wait_for_first_client(void *arg) {
  lagscope__web *web = arg;
  if (!await_first_client(web)) return;
  /* A copy: in a table of its own it names this thread's descriptor, while web->listener stays
   * the app table's, closed (checked) at stop, as the wake pipe is. */
  lagscope__owned_fd listener = web->listener;
  char why[256] = "";
  int apart = keep_apart(&listener, why, sizeof(why));
  int rc = apart < 0 ? LAGSCOPE_ESYS : start_civetweb(web, &listener, why, sizeof(why));
  if (rc == LAGSCOPE_OK) {
    serve_until_stopped(web);
    return; /* a table of its own goes with its last thread */
  }
  /* Refused at once, not left in the backlog: shut down, since the app's table holds the socket
   * too when this thread has its own. */
  int fd = lagscope__owned_fd_get(&listener);
  if (fd >= 0) shutdown(fd, SHUT_RDWR);
  if (!apart) lagscope__owned_fd_close(&listener);
  lagscope__publish_error(rc, "viewer not started: %s", why);
}

/* The waiter started on the listening socket, or why not. F */
static int start_waiting(lagscope__web *web, char *why, size_t why_size) {
  int rc = lagscope__thread_start(&web->waiter, "lagscope-viewer", wait_for_first_client, web);
  if (rc != LAGSCOPE_OK)
    lagscope__explain(why, why_size, "no thread for the viewer: %s", lagscope_strerror(rc));
  return rc;
}

/* The waiter stopped and joined, its wake pipe emptied (a stop may come after it returned). */
static void stop_waiting(lagscope__web *web) {
  if (web->waiter == NULL) return;
  atomic_store(&web->waiter_stop, 1);
  lagscope__wakeup_post(web->serving_stop);
  char byte = 1;
  int wake = lagscope__owned_fd_get(&web->wake_write); /* never the app's file */
  ssize_t written = wake >= 0 ? write(wake, &byte, 1) : -1;
  (void)written; /* a full pipe wakes it as well; without one it looks within a second */
  lagscope__thread_join(web->waiter);
  web->waiter = NULL;
  atomic_store(&web->waiter_stop, 0);
  int drain = lagscope__owned_fd_get(&web->wake_read);
  while (drain >= 0 && read(drain, &byte, 1) == 1) {
  }
}

static void web_free(lagscope__web *web) {
  lagscope__web_stream_free(web->stream);
  for (uint32_t i = 0; web->hitches != NULL && i < web->config.hitch_keep; i++)
    lagscope__dealloc(web->hitches[i]);
  lagscope__dealloc(web->hitches);
  lagscope__dealloc(web->metrics_latest);
  pthread_mutex_destroy(&web->metrics_lock);
  pthread_mutex_destroy(&web->capture_lock);
  lagscope__owned_fd_close(&web->listener);
  lagscope__owned_fd_close(&web->wake_read);
  lagscope__owned_fd_close(&web->wake_write);
  lagscope__wakeup_free(web->listener_go);
  lagscope__wakeup_free(web->serving_stop);
  lagscope__dealloc(web);
}

/* The viewer's URL for its port and token, on the LAN address the bind gives (address.c). */
static void make_url(lagscope__web *web) {
  char address[64];
  lagscope__web_lan_address_pick(web->bind, address, sizeof(address));
  snprintf(web->url, sizeof(web->url), "http://%s:%u/?token=%s", address, (unsigned)web->port,
           web->token);
}

/* The name goes as it is into JSON (the status, the stream's hello) and into a metrics label,
 * which must be UTF-8: control bytes, quotes, backslashes and bytes that are not UTF-8 (a
 * name that is not, a character cut at the bound of web->app_name) become '?'. F */
static void clean_app_name(char *name) {
  for (unsigned char *p = (unsigned char *)name; *p != '\0';) {
    size_t n = lagscope__utf8_sequence(p);
    if (n == 0 || *p < 0x20 || *p == 0x7f || *p == '"' || *p == '\\') *p = '?', n = 1;
    p += n;
  }
}

int lagscope__web_start(const lagscope__web_host *host, lagscope__web **out, char *why,
                        size_t why_size) {
  *out = NULL;
  lagscope__web *web = lagscope__alloc(sizeof(*web));
  if (web == NULL) return LAGSCOPE_ENOMEM;
  pthread_mutex_init(&web->metrics_lock, NULL);
  pthread_mutex_init(&web->capture_lock, NULL);
  web->listener = web->wake_read = web->wake_write = LAGSCOPE__OWNED_FD_NONE;
  web->config = *host->config;
  lagscope__web_credential_take(host->config, web->metrics_token);
  snprintf(web->openmetrics.app_version, sizeof(web->openmetrics.app_version), "%s",
           host->config->app_version != NULL ? host->config->app_version : "");
  web->config.metrics_token = web->config.app_version = NULL; /* the app's strings: copied */
  snprintf(web->bind, sizeof(web->bind), "%s",
           host->config->server_bind != NULL ? host->config->server_bind : "0.0.0.0");
  web->config.server_bind = web->bind;
  snprintf(web->report_dir, sizeof(web->report_dir), "%s", host->report_dir);
  snprintf(web->app_name, sizeof(web->app_name), "%s", host->app_name);
  clean_app_name(web->app_name);
  web->capture_now = host->capture_now;
  web->launch_wall_ms = lagscope__wall_ms();
  web->launch_ns = lagscope__now_ns();
  web->stream = lagscope__web_stream_new(host->config->server_max_stream_clients);
  web->hitches = lagscope__alloc(sizeof(char *) * web->config.hitch_keep);
  web->listener_go = lagscope__wakeup_new();
  web->serving_stop = lagscope__wakeup_new();
  int rc = web->stream != NULL && web->hitches != NULL && web->listener_go != NULL &&
               web->serving_stop != NULL
               ? LAGSCOPE_OK : LAGSCOPE_ENOMEM;
  if (rc == LAGSCOPE_OK && open_wake_pipe(web) != 0) {
    lagscope__explain(why, why_size, "no pipe for the viewer: %s", strerror(errno));
    rc = LAGSCOPE_ESYS;
  }
  if (rc == LAGSCOPE_OK)
    rc = lagscope__web_token_make(web->report_dir, web->token, web->previous_token, why, why_size);
  if (rc == LAGSCOPE_OK) rc = open_listener(web, why, why_size);
  if (rc == LAGSCOPE_OK) rc = start_waiting(web, why, why_size);
  if (rc != LAGSCOPE_OK) {
    web_free(web);
    return rc;
  }
  make_url(web);
  *out = web;
  return LAGSCOPE_OK;
}

void lagscope__web_on_event(const lagscope_event *event, void *data) {
  lagscope__web *web = data;
  if (event->type == LAGSCOPE_EVENT_HANG_BEGAN) {
    atomic_fetch_add(&web->hangs, 1);
    atomic_store(&web->hang_in_progress, 1);
  } else if (event->type == LAGSCOPE_EVENT_HANG_ENDED) {
    atomic_store(&web->hang_in_progress, 0);
  }
  if (event->type == LAGSCOPE_EVENT_HANG_ENDED || event->type == LAGSCOPE_EVENT_HITCH ||
      event->type == LAGSCOPE_EVENT_METRICS) {
    pthread_mutex_lock(&web->metrics_lock);
    lagscope__web_openmetrics_count(&web->openmetrics, event);
    pthread_mutex_unlock(&web->metrics_lock);
  }
  char *json = lagscope__event_text(event);
  if (json == NULL) return;
  if (event->type == LAGSCOPE_EVENT_HITCH) lagscope__web_api_keep_hitch(web, json);
  lagscope__web_stream_publish(web->stream, lagscope_event_type_name(event->type), event->sequence,
                               json);
  if (event->type == LAGSCOPE_EVENT_METRICS && event->payload.metrics != NULL)
    lagscope__web_api_keep_metrics(web, event, json); /* takes json */
  else
    lagscope__dealloc(json);
}

/* While mg_stop runs: civetweb's listening thread looks at its stop flag between waits of 2 s
 * for a connection, and a worker between waits of 2 s on its client's socket (a client that
 * sends nothing, or reads nothing of a long answer). A connection now and then makes the
 * listener look at once, and every client's connection is shut down, so that each worker's
 * wait ends at once: lagscope_stop returns in milliseconds, not seconds. */
typedef struct stop_poke {
  lagscope__web *web;
  _Atomic int done;
} stop_poke;

static void poke_listener(void *arg) {
  stop_poke *poke = arg;
  struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(poke->web->port)};
  const char *host = strcmp(poke->web->bind, "0.0.0.0") == 0 ? "127.0.0.1" : poke->web->bind;
  inet_pton(AF_INET, host, &to.sin_addr);
  while (!atomic_load(&poke->done)) {
    int fd = socket(AF_INET, SOCK_STREAM, 0); /* no SOCK_CLOEXEC: Darwin has none */
    if (fd >= 0) {
      fcntl(fd, F_SETFD, FD_CLOEXEC);
      connect(fd, (struct sockaddr *)&to, sizeof(to));
      close(fd);
    }
    lagscope__web_access_shut_peers_past(poke->web, 0);
    struct timespec pause = {0, 20 * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
}

/* Stops civetweb (its threads joined); web->ctx is NULL after. */
static void stop_civetweb(lagscope__web *web) {
  if (web->ctx == NULL) return;
  lagscope__web_stream_close(web->stream); /* streams return, so that their threads can join */
  stop_poke poke = {.web = web};
  lagscope__thread *poker = NULL;
  lagscope__thread_start(&poker, "lagscope-stop", poke_listener, &poke);
  mg_stop(web->ctx);
  atomic_store(&poke.done, 1);
  if (poker != NULL) lagscope__thread_join(poker);
  mg_exit_library();
  web->ctx = NULL;
}

void lagscope__web_stop(lagscope__web *web) {
  if (web == NULL) return;
  stop_waiting(web);
  stop_civetweb(web);
  web_free(web);
}

/* The listener again, on the port it had (so the URL stays) and with the token it had: iOS
 * closes a suspended app's listening sockets, and civetweb never reopens one. civetweb starts
 * again at the next client. */
int lagscope__web_restart(lagscope__web *web, char *why, size_t why_size) {
  stop_waiting(web);
  stop_civetweb(web);
  lagscope__owned_fd_close(&web->listener);
  lagscope__web_stream_reopen(web->stream);
  uint16_t asked = web->config.server_port, before = web->port;
  web->config.server_port = web->port;
  int rc = open_listener(web, why, why_size);
  web->config.server_port = asked;
  if (rc == LAGSCOPE_OK && web->port != before) make_url(web); /* its port was taken meanwhile */
  if (rc == LAGSCOPE_OK) rc = start_waiting(web, why, why_size);
  return rc;
}

const char *lagscope__web_url(const lagscope__web *web) { return web->url; }
uint16_t lagscope__web_port(const lagscope__web *web) { return web->port; }
