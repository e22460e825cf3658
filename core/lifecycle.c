/*
 * The running instance's life: lagscope_start and lagscope_stop, subscriptions, and the way
 * consumers reach the monitor (capture now). An instance is a configuration, a dispatcher
 * (core/deliver/dispatcher.c) and a monitor (core/monitor.c); the main thread's calls
 * (core/detect/main_thread.c) need none of them.
 *
 * Start: dispatcher, consumers (the viewer binds its port here), dispatcher thread, monitor
 * thread. Stop: the monitor first (no new events), then the dispatcher, which stops the
 * consumers and lets every subscriber deliver what was already published.
 */
#include "internal.h"

#include <pthread.h>
#include <stdio.h>

typedef struct instance {
  lagscope_config config;
  lagscope__dispatcher *dispatcher;
  lagscope__monitor *monitor;
} instance;

typedef enum lifecycle_state { STOPPED, RUNNING, STOPPING } lifecycle_state;

static pthread_mutex_t lifecycle_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t lifecycle_changed = PTHREAD_COND_INITIALIZER;
static _Atomic int lifecycle = STOPPED;
/* Set before lagscope's threads start and cleared after they are joined, so they may use it
 * without a lock. */
static instance *running;

static void instance_free(instance *in) {
  lagscope__monitor_free(in->monitor);
  lagscope__dispatcher_free(in->dispatcher);
  lagscope__dealloc(in);
}

static int instance_new(const lagscope_config *config, instance **out) {
  instance *in = lagscope__alloc(sizeof(*in));
  if (in == NULL) return LAGSCOPE_ENOMEM;
  in->config = *config;
  lagscope__capture_set_copy_bytes((size_t)config->stack_copy_kib * 1024u); /* no monitor yet */
  int rc = lagscope__dispatcher_new(&in->config, &in->dispatcher);
  if (rc == LAGSCOPE_OK) rc = lagscope__monitor_new(&in->config, in->dispatcher, &in->monitor);
  if (rc == LAGSCOPE_OK && config->on_event != NULL)
    rc = lagscope__dispatcher_subscribe(in->dispatcher, config->on_event, config->on_event_user,
                                        NULL);
  if (rc != LAGSCOPE_OK) {
    instance_free(in);
    return rc;
  }
  *out = in;
  return LAGSCOPE_OK;
}

static void instance_shutdown(instance *in) {
  lagscope__monitor_stop(in->monitor);
  lagscope__dispatcher_stop(in->dispatcher);
}

static void wait_while_stopping(void) {
  while (atomic_load(&lifecycle) == STOPPING) pthread_cond_wait(&lifecycle_changed, &lifecycle_lock);
}

static void log_started(const lagscope_config *c) {
  char line[256];
  snprintf(line, sizeof(line),
           "started (version " LAGSCOPE_VERSION_STRING "): %s mode, hang threshold %u ms, "
           "display %u Hz until measured",
           c->post_main != NULL ? "post_main" : "heartbeat", c->hang_threshold_ms, c->refresh_hz);
  lagscope__log_line(c, line);
}

/* Makes and starts an instance. Caller holds lifecycle_lock. */
static int instance_start(const lagscope_config *c) {
  instance *in;
  int rc = instance_new(c, &in);
  if (rc != LAGSCOPE_OK) return rc;
  running = in;
  lagscope__publish_to(lagscope__dispatcher_bus(in->dispatcher), &in->config);
  lagscope__main_thread_watch(lagscope__thread_to_watch());
  /* The consumers before the monitor, which would see the caller's time in civetweb's start-up
   * as a hang of the main thread; before the dispatcher thread, which reads their list. */
  lagscope__dispatcher_start_consumers(in->dispatcher, &in->config);
  rc = lagscope__dispatcher_start(in->dispatcher);
  if (rc == LAGSCOPE_OK) rc = lagscope__monitor_start(in->monitor);
  if (rc != LAGSCOPE_OK) {
    instance_shutdown(in);
    lagscope__publish_to(NULL, NULL);
    instance_free(in);
    running = NULL;
  }
  return rc;
}

int lagscope_start(const lagscope_config *config) {
  lagscope_config c = config != NULL ? *config : lagscope_config_default();
  char why[256];
  if (lagscope_config_validate(&c, why, sizeof(why)) != LAGSCOPE_OK) {
    char line[320];
    snprintf(line, sizeof(line), "not started: %s", why);
    lagscope__log_line(&c, line);
    return LAGSCOPE_EINVAL;
  }
  lagscope__platform_defaults(&c);
  pthread_mutex_lock(&lifecycle_lock);
  wait_while_stopping();
  int already = atomic_load(&lifecycle) == RUNNING;
  if (!already) lagscope__platform_prepare(); /* before the monitor exists */
  int rc = already ? LAGSCOPE_EALREADY : instance_start(&c);
  if (rc == LAGSCOPE_OK) {
    atomic_store(&lifecycle, RUNNING);
    log_started(&c);
    lagscope__platform_start(&c);
  }
  pthread_mutex_unlock(&lifecycle_lock);
  return rc;
}

int lagscope_stop(void) {
  if (lagscope__thread_is_own()) return LAGSCOPE_EDEADLK;
  pthread_mutex_lock(&lifecycle_lock);
  wait_while_stopping();
  if (atomic_load(&lifecycle) != RUNNING) {
    pthread_mutex_unlock(&lifecycle_lock);
    return LAGSCOPE_ENOTRUNNING;
  }
  atomic_store(&lifecycle, STOPPING);
  lagscope__platform_stop();
  instance *in = running;
  /* Joined without the lock, so that a callback calling into lagscope meanwhile does not
   * deadlock; it finds lagscope stopping. */
  pthread_mutex_unlock(&lifecycle_lock);
  instance_shutdown(in);
  lagscope__publish_to(NULL, NULL);
  instance_free(in); /* delivers what the subscribers still have queued */
  pthread_mutex_lock(&lifecycle_lock);
  running = NULL;
  atomic_store(&lifecycle, STOPPED);
  pthread_cond_broadcast(&lifecycle_changed);
  pthread_mutex_unlock(&lifecycle_lock);
  return LAGSCOPE_OK;
}

int lagscope_is_running(void) { return atomic_load(&lifecycle) == RUNNING; }

int lagscope_subscribe(lagscope_event_fn fn, void *user, lagscope_subscription *out) {
  if (fn == NULL) return LAGSCOPE_EINVAL;
  pthread_mutex_lock(&lifecycle_lock);
  int rc = atomic_load(&lifecycle) == RUNNING
               ? lagscope__dispatcher_subscribe(running->dispatcher, fn, user, out)
               : LAGSCOPE_ENOTRUNNING;
  pthread_mutex_unlock(&lifecycle_lock);
  return rc;
}

int lagscope_unsubscribe(lagscope_subscription id) {
  pthread_mutex_lock(&lifecycle_lock);
  if (!lagscope__thread_is_own()) wait_while_stopping();
  if (atomic_load(&lifecycle) != RUNNING) {
    pthread_mutex_unlock(&lifecycle_lock);
    return LAGSCOPE_ENOTRUNNING;
  }
  lagscope__subscriber *s;
  int rc = lagscope__dispatcher_unlink(running->dispatcher, id, &s);
  pthread_mutex_unlock(&lifecycle_lock);
  /* Stopped without the lock: its last callback may call into lagscope. */
  if (rc == LAGSCOPE_OK) lagscope__subscriber_stop(s);
  return rc;
}

int lagscope__capture_now(char **json, uint64_t timeout_ns) {
  instance *in = running; /* consumers are stopped before the instance is freed */
  *json = NULL;
  if (in == NULL) return LAGSCOPE_ENOTRUNNING;
  return lagscope__monitor_capture_now(in->monitor, json, timeout_ns);
}
