/*
 * GET /metrics for a team's Prometheus: the app's hangs, hitches, frames, CPU and memory as
 * counters, gauges and histograms, in the OpenMetrics text format when the scraper asks for
 * it (Prometheus does, in its Accept header), else in Prometheus's text format 0.0.4 (what
 * curl and `promtool check metrics` read). The two differ only where OpenMetrics insists: a
 * counter's family is named without "_total", lagscope_info is of type info, and "# EOF" ends
 * it. docs/viewer-api.md, "GET /metrics".
 *
 * The numbers are kept from the events on the web's subscriber thread (counted under the
 * web's metrics lock, never on the app's threads) and written at each scrape from a copy.
 */
#include "http.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

/* Upper bounds of the hang duration histogram, in seconds: from the hang threshold's default
 * (250 ms, Apple's hang) to the 30 s past which a user has long given up. Close together below
 * a second, where most hangs are: histogram_quantile interpolates inside a bucket, so its
 * width is the quantile's error (every hang 0.58 s long: a p95 of 0.595 s, where 0.5..1 said
 * 0.975 s). */
static const double hang_bounds_s[LAGSCOPE__WEB_HANG_BUCKETS - 1] = {
    0.25, 0.3, 0.4, 0.5, 0.6, 0.75, 1, 1.5, 2, 3, 5, 10, 30};

/* ---- counting ----------------------------------------------------------------------------------- */

static int kind_index(const char *kind) {
  for (int k = 0; k < LAGSCOPE__CAUSE_COUNT; k++)
    if (strcmp(kind, lagscope__cause_kind_name(k)) == 0) return k;
  return LAGSCOPE__CAUSE_UNKNOWN;
}

static void count_hang(lagscope__web_openmetrics *m, const lagscope_event *e) {
  if (!e->as.hang_ended.counted) return; /* an idle hang: reported, not counted as a hang */
  const char *kind = e->payload.report != NULL ? lagscope__hang_report_kind(e->payload.report) : "";
  m->hangs_by_kind[kind_index(kind)]++;
  double seconds = (double)e->as.hang_ended.duration_ns / 1e9;
  int b = 0;
  while (b < LAGSCOPE__WEB_HANG_BUCKETS - 1 && seconds > hang_bounds_s[b]) b++;
  m->hang_buckets[b]++;
  m->hang_seconds_sum += seconds;
}

void lagscope__web_openmetrics_count(lagscope__web_openmetrics *m, const lagscope_event *e) {
  switch (e->type) {
    case LAGSCOPE_EVENT_HANG_ENDED: count_hang(m, e); break;
    case LAGSCOPE_EVENT_HITCH: m->hitches++; break;
    case LAGSCOPE_EVENT_MONITOR_BLIND:
      m->blind_spells++;
      m->blind_seconds_sum += (double)e->as.monitor_blind.duration_ns / 1e9;
      break;
    case LAGSCOPE_EVENT_METRICS:
      if (e->payload.metrics == NULL) break;
      m->latest = *e->payload.metrics;
      m->have_latest = 1;
      break;
    default: break;
  }
}

/* ---- writing ------------------------------------------------------------------------------------- */

typedef struct om_text {
  char *buf;
  size_t size, len;
  int open_metrics; /* the OpenMetrics format, else text 0.0.4 */
  int overflow;
} om_text;

static void put(om_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(om_text *t, const char *fmt, ...) {
  if (t->overflow) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(t->buf + t->len, t->size - t->len, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= t->size - t->len) t->overflow = 1;
  else t->len += (size_t)n;
}

/* A family's HELP and TYPE lines. A counter's family is named without "_total" in
 * OpenMetrics, with it in text 0.0.4 (whose TYPE names the sample). */
static void family(om_text *t, const char *name, const char *type, const char *help) {
  size_t n = strlen(name);
  int counter = strcmp(type, "counter") == 0;
  if (t->open_metrics && counter && n > 6 && strcmp(name + n - 6, "_total") == 0) n -= 6;
  put(t, "# HELP %.*s %s\n# TYPE %.*s %s\n", (int)n, name, help, (int)n, name, type);
}

/* A label's value with OpenMetrics's three escapes; other bytes as they are. */
static void label_value(om_text *t, const char *value) {
  for (const char *p = value; *p != '\0'; p++) {
    if (*p == '\\') put(t, "\\\\");
    else if (*p == '"') put(t, "\\\"");
    else if (*p == '\n') put(t, "\\n");
    else put(t, "%c", *p);
  }
}

/* A bucket's bound as both formats write it: the shortest exact decimal of a few digits. */
static void bucket(om_text *t, const char *name, double le, uint64_t cumulative) {
  put(t, "%s_bucket{le=\"%g\"} %llu\n", name, le, (unsigned long long)cumulative);
}

static void hangs_write(om_text *t, const lagscope__web_openmetrics *m) {
  family(t, "lagscope_hangs_total", "counter",
         "Hangs that ended, by the verdict's kind (idle ones, not counted as hangs, left out).");
  for (int k = 0; k < LAGSCOPE__CAUSE_COUNT; k++) {
    if (k == LAGSCOPE__CAUSE_IDLE) continue;
    put(t, "lagscope_hangs_total{kind=\"%s\"} %llu\n", lagscope__cause_kind_name(k),
        (unsigned long long)m->hangs_by_kind[k]);
  }
  family(t, "lagscope_hang_duration_seconds", "histogram", "How long each counted hang lasted.");
  uint64_t cumulative = 0;
  for (int b = 0; b < LAGSCOPE__WEB_HANG_BUCKETS - 1; b++) {
    cumulative += m->hang_buckets[b];
    bucket(t, "lagscope_hang_duration_seconds", hang_bounds_s[b], cumulative);
  }
  cumulative += m->hang_buckets[LAGSCOPE__WEB_HANG_BUCKETS - 1];
  put(t, "lagscope_hang_duration_seconds_bucket{le=\"+Inf\"} %llu\n", (unsigned long long)cumulative);
  put(t, "lagscope_hang_duration_seconds_sum %.6f\n", m->hang_seconds_sum);
  put(t, "lagscope_hang_duration_seconds_count %llu\n", (unsigned long long)cumulative);
  family(t, "lagscope_hitches_total", "counter",
         "Stalls of hitch_report_ms (50) or more that ended before the hang threshold.");
  put(t, "lagscope_hitches_total %llu\n", (unsigned long long)m->hitches);
}

/* Spells in which lagscope could not watch (monitor_blind events): a stall then went unseen,
 * so a dashboard of few hangs says whether it could see them. */
static void blind_write(om_text *t, const lagscope__web_openmetrics *m) {
  family(t, "lagscope_blind_spells_total", "counter",
         "Spells of a quarter of the hang threshold or more in which lagscope could not watch "
         "the main thread (monitor_blind events).");
  put(t, "lagscope_blind_spells_total %llu\n", (unsigned long long)m->blind_spells);
  family(t, "lagscope_blind_spell_seconds_total", "counter",
         "The blind spells' durations summed.");
  put(t, "lagscope_blind_spell_seconds_total %.6f\n", m->blind_seconds_sum);
}

/* The process's CPU time, user and system, since it began: a counter, read now (the gauge
 * lagscope_cpu_usage_ratio is a rate over the last sample). */
static void cpu_write(om_text *t) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return;
  double seconds = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                   (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
  family(t, "lagscope_process_cpu_seconds_total", "counter",
         "CPU time the process used since it began, user and system.");
  put(t, "lagscope_process_cpu_seconds_total %.6f\n", seconds);
}

/* The frame times since start as a histogram of the frame meter's own buckets, with their sum
 * and count (frames that have a frame time: not the first, nor the first after an idle gap). */
static void frames_write(om_text *t, const lagscope_frame_metrics *f) {
  family(t, "lagscope_frame_time_seconds", "histogram",
         "Time between presented frames since start.");
  uint64_t cumulative = 0;
  for (int b = 0; b < LAGSCOPE_FRAME_HISTOGRAM_BUCKETS - 1; b++) {
    cumulative += f->histogram[b];
    bucket(t, "lagscope_frame_time_seconds", lagscope__histogram_edges_ms[b] / 1000.0, cumulative);
  }
  cumulative += f->histogram[LAGSCOPE_FRAME_HISTOGRAM_BUCKETS - 1];
  put(t, "lagscope_frame_time_seconds_bucket{le=\"+Inf\"} %llu\n", (unsigned long long)cumulative);
  put(t, "lagscope_frame_time_seconds_sum %.6f\n", f->time_sum_ms / 1000.0);
  put(t, "lagscope_frame_time_seconds_count %llu\n", (unsigned long long)cumulative);
  family(t, "lagscope_frames_total", "counter", "Frames presented since start.");
  put(t, "lagscope_frames_total %llu\n", (unsigned long long)f->total_frames);
  family(t, "lagscope_frames_dropped_total", "counter", "Display refreshes missed since start.");
  put(t, "lagscope_frames_dropped_total %llu\n", (unsigned long long)f->total_dropped);
  family(t, "lagscope_fps", "gauge", "Frames presented in the last second.");
  put(t, "lagscope_fps %.3f\n", f->fps);
}

static void gauge(om_text *t, const char *name, const char *help, double value) {
  family(t, name, "gauge", help);
  put(t, "%s %.6f\n", name, value);
}

static void gauge_u64(om_text *t, const char *name, const char *help, uint64_t value) {
  family(t, name, "gauge", help);
  put(t, "%s %llu\n", name, (unsigned long long)value);
}

/* The gauges of the last metrics sample; none before the first (rather than made-up zeros). */
static void usage_write(om_text *t, const lagscope__web_openmetrics *m) {
  if (!m->have_latest) return;
  const lagscope_metrics *u = &m->latest;
  frames_write(t, &u->frames);
  gauge(t, "lagscope_cpu_usage_ratio",
        "CPU the process used over the last sample, in cores (1: one core busy; can exceed 1).",
        u->cpu_percent / 100.0);
  gauge_u64(t, "lagscope_resident_memory_bytes", "The process's resident set (RSS).",
            u->rss_bytes);
  gauge_u64(t, "lagscope_proportional_memory_bytes",
            "The process's proportional set (PSS; 0 where the OS has none).", u->pss_bytes);
  gauge_u64(t, "lagscope_threads", "The process's threads.", u->thread_count);
  gauge_u64(t, "lagscope_hang_in_progress", "1 while the main thread is hung.",
            u->hang_in_progress ? 1 : 0);
}

/* An info family: of type info in OpenMetrics (its family named without "_info"), a gauge
 * of 1 in 0.0.4. */
static void info_family(om_text *t, const char *family_name, const char *help) {
  if (t->open_metrics)
    put(t, "# HELP %s %s.\n# TYPE %s info\n", family_name, help, family_name);
  else
    put(t, "# HELP %s_info %s (always 1).\n# TYPE %s_info gauge\n", family_name, help,
        family_name);
}

static void info_write(om_text *t, const lagscope__web_openmetrics *m, const char *app,
                       int32_t pid) {
  info_family(t, "lagscope", "The watched app");
  put(t, "lagscope_info{app=\"");
  label_value(t, app);
  put(t, "\",version=\"%s\",pid=\"%ld\"} 1\n", LAGSCOPE_VERSION_STRING, (long)pid);
  /* The usual build_info: the app's name and version, lagscope's; no pid, so that it is one
   * series per build across runs. */
  info_family(t, "lagscope_build", "The watched app's name and version (config.app_name, "
              "config.app_version) and lagscope's version");
  put(t, "lagscope_build_info{app=\"");
  label_value(t, app);
  put(t, "\",version=\"");
  label_value(t, m->app_version);
  put(t, "\",lagscope_version=\"%s\"} 1\n", LAGSCOPE_VERSION_STRING);
}

char *lagscope__web_openmetrics_text(const lagscope__web_openmetrics *m, const char *app,
                                     int32_t pid, int open_metrics) {
  om_text t = {.open_metrics = open_metrics};
  for (t.size = 8192; t.size <= (1u << 20); t.size *= 2) {
    t.buf = lagscope__alloc(t.size);
    if (t.buf == NULL) return NULL;
    t.len = 0;
    t.overflow = 0;
    info_write(&t, m, app, pid);
    hangs_write(&t, m);
    blind_write(&t, m);
    cpu_write(&t);
    usage_write(&t, m);
    if (open_metrics) put(&t, "# EOF\n");
    if (!t.overflow) return t.buf;
    lagscope__dealloc(t.buf); /* an app name of a kilobyte: once more, larger */
  }
  return NULL;
}

/* ---- the route ------------------------------------------------------------------------------------ */

/* Whether the scraper accepts OpenMetrics: Prometheus lists it first in its Accept header. */
static int wants_open_metrics(const char *accept) {
  return accept != NULL && strstr(accept, "application/openmetrics-text") != NULL;
}

int lagscope__web_api_openmetrics(lagscope__web_request *req, const char *accept) {
  lagscope__web *web = req->web;
  lagscope__web_openmetrics *copy = lagscope__alloc(sizeof(*copy));
  if (copy == NULL) return lagscope__web_reply_error(req, 503, "busy", "out of memory");
  pthread_mutex_lock(&web->metrics_lock);
  *copy = web->openmetrics;
  pthread_mutex_unlock(&web->metrics_lock);
  int om = wants_open_metrics(accept);
  char *text = lagscope__web_openmetrics_text(copy, web->app_name, lagscope__process_id(), om);
  lagscope__dealloc(copy);
  if (text == NULL) return lagscope__web_reply_error(req, 503, "busy", "out of memory");
  lagscope__web_reply reply = {
      .status = 200,
      .content_type = om ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                         : "text/plain; version=0.0.4; charset=utf-8",
      .body = text, .length = strlen(text)};
  int handled = lagscope__web_reply_send(req, &reply);
  lagscope__dealloc(text);
  return handled;
}
