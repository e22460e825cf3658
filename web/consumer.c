/*
 * The LAN viewer as a consumer of lagscope's events (core/deliver/dispatcher.c): started with lagscope
 * (its port bound before the monitor runs), fed on a delivery thread of its own, restarted
 * when the app returns to the foreground, stopped with lagscope.
 */
#include "web.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* The running viewer, for lagscope_viewer_url; the lock also keeps a restart (dispatcher
 * thread) and a stop (stopping thread) apart. */
static pthread_mutex_t viewer_lock = PTHREAD_MUTEX_INITIALIZER;
static lagscope__web *current;

static void publish_started(lagscope__web *web) {
  const char *url = lagscope__web_url(web);
  lagscope__log("viewer: %s", url);
  char *message = lagscope__payload_text(url);
  if (message == NULL) return;
  lagscope_event e = {.type = LAGSCOPE_EVENT_SERVER_STARTED};
  e.as.server_started.port = lagscope__web_port(web);
  e.payload.message = message;
  lagscope__publish(&e);
}

static int viewer_start(const lagscope_config *config, lagscope__dispatcher *dispatcher,
                        void **state, char *why, size_t why_size) {
  (void)dispatcher;
  if (!config->server) return LAGSCOPE_OK; /* not wanted */
  char app_name[64], report_dir[512];
  lagscope__app_name(config, app_name, sizeof(app_name));
  lagscope__report_dir(config, app_name, report_dir, sizeof(report_dir));
  lagscope__web_host host = {config, report_dir, app_name, lagscope__capture_now};
  lagscope__web *web = NULL;
  int rc = lagscope__web_start(&host, &web, why, why_size);
  if (rc != LAGSCOPE_OK) return rc;
  pthread_mutex_lock(&viewer_lock);
  current = web;
  pthread_mutex_unlock(&viewer_lock);
  publish_started(web);
  *state = web;
  return LAGSCOPE_OK;
}

/* The dispatcher thread; may come at once with viewer_stop, so it restarts `current`, under
 * the lock, rather than its state. */
static void viewer_resume(void *state) {
  (void)state;
  char why[256] = "";
  pthread_mutex_lock(&viewer_lock);
  uint16_t port = current != NULL ? lagscope__web_port(current) : 0;
  int rc = current != NULL ? lagscope__web_restart(current, why, sizeof(why)) : LAGSCOPE_OK;
  /* Another port (the old one was taken while the app slept): the HUD, the log and the app's
   * subscribers learn the new URL as they learnt the first. */
  if (rc == LAGSCOPE_OK && current != NULL && lagscope__web_port(current) != port)
    publish_started(current);
  pthread_mutex_unlock(&viewer_lock);
  if (rc != LAGSCOPE_OK) lagscope__publish_error(rc, "viewer not restarted: %s", why);
}

static void viewer_stop(void *state) {
  pthread_mutex_lock(&viewer_lock);
  lagscope__web_stop(state);
  current = NULL;
  pthread_mutex_unlock(&viewer_lock);
}

const lagscope__consumer lagscope__viewer_consumer = {
    .name = "viewer",
    .delivery = LAGSCOPE__DELIVER_OWN_THREAD,
    .start = viewer_start,
    .on_event = lagscope__web_on_event,
    .resume = viewer_resume,
    .stop = viewer_stop,
};

int lagscope_viewer_url(char *out, size_t size) {
  if (out == NULL || size == 0) return LAGSCOPE_EINVAL;
  out[0] = '\0';
  pthread_mutex_lock(&viewer_lock);
  int rc = current == NULL ? (lagscope_is_running() ? LAGSCOPE_ENOENT : LAGSCOPE_ENOTRUNNING)
                           : LAGSCOPE_OK;
  if (current != NULL) {
    const char *url = lagscope__web_url(current);
    rc = strlen(url) < size ? LAGSCOPE_OK : LAGSCOPE_ELIMIT;
    if (rc == LAGSCOPE_OK) memcpy(out, url, strlen(url) + 1);
  }
  pthread_mutex_unlock(&viewer_lock);
  return rc;
}
