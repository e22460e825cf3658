/* Events as JSON: one line per event, the format of the demo's --events jsonl and of the
 * viewer's stream, field by field in README.md, "Events"; written as text (json_writer.c), not
 * built as a cJSON tree: a metrics event goes out twice a second. And the helpers for the
 * viewer's cJSON documents. 64-bit counters and clocks are written as exact integers (cJSON's
 * numbers are doubles, exact only to 2^53). */
#include "internal.h"

#include "cjson_calls.h"
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double histogram_edges_ms[LAGSCOPE_FRAME_HISTOGRAM_BUCKETS - 1] =
    LAGSCOPE_FRAME_HISTOGRAM_EDGES_MS;

/* Numbers are written as text here, not by cJSON: it prints each with sprintf and reads it
 * back with sscanf, and on an idle app's path (a metrics event each 500 ms) those are the
 * only callers of libc's formatting code, 64 KiB pages of it made resident, and ~1 µs a
 * number. */

/* value's decimal digits into out (NUL-terminated); its length. F */
size_t lagscope__json_u64_text(uint64_t value, char *out) {
  char reversed[20];
  size_t n = 0;
  do {
    reversed[n++] = (char)('0' + value % 10);
    value /= 10;
  } while (value != 0);
  for (size_t i = 0; i < n; i++) out[i] = reversed[n - 1 - i];
  out[n] = '\0';
  return n;
}

static size_t i64_text(int64_t value, char *out) {
  if (value >= 0) return lagscope__json_u64_text((uint64_t)value, out);
  out[0] = '-';
  return 1 + lagscope__json_u64_text(0 - (uint64_t)value, out + 1);
}

/* A measurement rounded to 0.001, as thousandths: "12.345", "-0.5", "3"; 0 when it is too
 * large for that (then cJSON writes it). The text reads back as lagscope__json_rounded's
 * double: both are the double nearest to the same number of thousandths. F */
static int measure_text(double value, char *out) {
  double scaled = value * 1000.0;
  if (!(fabs(scaled) < 4e15)) return 0; /* NaN too */
  int64_t thousandths = (int64_t)scaled; /* toward zero, then half away from zero */
  double fraction = scaled - (double)thousandths;
  if (fraction >= 0.5) thousandths++;
  else if (fraction <= -0.5) thousandths--;
  uint64_t magnitude = thousandths < 0 ? 0 - (uint64_t)thousandths : (uint64_t)thousandths;
  size_t n = 0;
  if (thousandths < 0) out[n++] = '-';
  n += lagscope__json_u64_text(magnitude / 1000, out + n);
  unsigned fraction_digits = (unsigned)(magnitude % 1000);
  if (fraction_digits != 0) {
    out[n++] = '.';
    for (unsigned unit = 100; unit > 0 && fraction_digits != 0; unit /= 10) {
      out[n++] = (char)('0' + fraction_digits / unit);
      fraction_digits %= unit;
    }
  }
  out[n] = '\0';
  return 1;
}

void lagscope__json_add_u64(cJSON *object, const char *name, uint64_t value) {
  char text[24];
  lagscope__json_u64_text(value, text);
  cJSON_AddRawToObject(object, name, text);
}

void lagscope__json_add_i64(cJSON *object, const char *name, int64_t value) {
  char text[24];
  i64_text(value, text);
  cJSON_AddRawToObject(object, name, text);
}

/* A measurement as an array item (see measure_text). */
static cJSON *measure_item(double value) {
  char text[32];
  if (!isfinite(value)) return cJSON_CreateNull();
  return measure_text(value, text) ? cJSON_CreateRaw(text)
                                   : cJSON_CreateNumber(lagscope__json_rounded(value));
}

/* Measurements as decimals people read: 0.001 is finer than any of them is accurate. Rounded
 * by hand, half away from zero as round() does: each metrics tick comes here, and round() is
 * libm's only call on an idle app's path, whose first call makes 64 KiB of libm resident. */
double lagscope__json_rounded(double value) {
  double scaled = value * 1000.0;
  if (!(fabs(scaled) < 4e15)) return value; /* beyond 2^52 a double has no fraction left */
  double whole = (double)(int64_t)scaled, fraction = scaled - whole; /* both exact */
  if (fraction >= 0.5) whole += 1.0;
  else if (fraction <= -0.5) whole -= 1.0; /* not scaled + 0.5: 0.49999999999999994 + 0.5 is 1 */
  return whole / 1000.0;
}

void lagscope__json_add_measure(cJSON *object, const char *name, double value) {
  cJSON_AddItemToObject(object, name, measure_item(value));
}

int lagscope__json_measure_text(double value, char *out) { return measure_text(value, out); }

void lagscope__metrics_tick_of(const lagscope_event *event, lagscope__metrics_tick *out) {
  const lagscope_metrics *m = event->payload.metrics;
  const lagscope_frame_metrics *f = &m->frames;
  *out = (lagscope__metrics_tick){
      .sequence = event->sequence, .time_ns = event->time_ns, .sampled_ns = m->time_ns,
      .wall_ms = m->wall_ms, .refresh_hz = f->refresh_hz, .fps = f->fps,
      .hitch_ms_per_s = f->hitch_ms_per_s, .cpu_percent = m->cpu_percent,
      .monitor_cpu_percent = m->monitor_cpu_percent, .total_frames = f->total_frames,
      .total_dropped = f->total_dropped, .lost_timestamps = f->lost_timestamps,
      .rss_bytes = m->rss_bytes, .pss_bytes = m->pss_bytes, .hangs = m->hangs,
      .events_published = m->events_published, .events_dropped = m->events_dropped,
      .monitor_memory_bytes = m->monitor_memory_bytes, .stopped_ms = m->stopped_ms,
      .monitor_starved_ms = m->monitor_starved_ms, .frames = f->frames, .dropped = f->dropped,
      .thread_count = m->thread_count, .band = (uint8_t)f->band, .idle = f->idle != 0,
      .hang_in_progress = m->hang_in_progress != 0};
}

/* A metrics event's members that a tick keeps. */
static void tick_write(lagscope__json_writer *w, const lagscope__metrics_tick *t) {
  lagscope__jw_u64(w, "sampled_ns", t->sampled_ns);
  lagscope__jw_i64(w, "wall_ms", t->wall_ms);
  lagscope__jw_measure(w, "refresh_hz", t->refresh_hz);
  lagscope__jw_measure(w, "fps", t->fps);
  lagscope__jw_u64(w, "frames", t->frames);
  lagscope__jw_u64(w, "dropped", t->dropped);
  lagscope__jw_measure(w, "hitch_ms_per_s", t->hitch_ms_per_s);
  lagscope__jw_string(w, "hitch_band", lagscope_hitch_band_name(t->band));
  lagscope__jw_bool(w, "idle", t->idle);
  lagscope__jw_u64(w, "total_frames", t->total_frames);
  lagscope__jw_u64(w, "total_dropped", t->total_dropped);
  lagscope__jw_u64(w, "lost_timestamps", t->lost_timestamps);
  lagscope__jw_measure(w, "cpu_percent", t->cpu_percent);
  lagscope__jw_u64(w, "thread_count", t->thread_count);
  lagscope__jw_u64(w, "rss_bytes", t->rss_bytes);
  lagscope__jw_u64(w, "pss_bytes", t->pss_bytes);
  lagscope__jw_u64(w, "hangs", t->hangs);
  lagscope__jw_bool(w, "hang_in_progress", t->hang_in_progress);
  lagscope__jw_u64(w, "events_published", t->events_published);
  lagscope__jw_u64(w, "events_dropped", t->events_dropped);
  lagscope__jw_measure(w, "monitor_cpu_percent", t->monitor_cpu_percent);
  lagscope__jw_u64(w, "monitor_memory_bytes", t->monitor_memory_bytes);
  lagscope__jw_u64(w, "stopped_ms", t->stopped_ms);
  lagscope__jw_u64(w, "monitor_starved_ms", t->monitor_starved_ms);
}

/* The members a tick leaves out. */
static void metrics_arrays_write(lagscope__json_writer *w, const lagscope_metrics *m) {
  const lagscope_frame_metrics *f = &m->frames;
  lagscope__jw_begin_object(w, "frame_histogram");
  lagscope__jw_begin_array(w, "edges_ms");
  for (int i = 0; i < LAGSCOPE_FRAME_HISTOGRAM_BUCKETS - 1; i++)
    lagscope__jw_measure(w, NULL, histogram_edges_ms[i]);
  lagscope__jw_end_array(w);
  lagscope__jw_begin_array(w, "counts");
  for (int i = 0; i < LAGSCOPE_FRAME_HISTOGRAM_BUCKETS; i++)
    lagscope__jw_u64(w, NULL, f->histogram[i]);
  lagscope__jw_end_array(w);
  lagscope__jw_end_object(w);
  lagscope__jw_begin_array(w, "recent_frame_ms");
  for (uint32_t i = 0; i < f->recent_count; i++) lagscope__jw_measure(w, NULL, f->recent_ms[i]);
  lagscope__jw_end_array(w);
  lagscope__jw_begin_array(w, "busiest_threads");
  for (uint32_t i = 0; i < m->busiest_count; i++) {
    lagscope__jw_begin_object(w, NULL);
    lagscope__jw_i64(w, "tid", m->busiest[i].tid);
    lagscope__jw_string(w, "name", m->busiest[i].name);
    lagscope__jw_measure(w, "cpu_percent", m->busiest[i].cpu_percent);
    lagscope__jw_end_object(w);
  }
  lagscope__jw_end_array(w);
}

static void metrics_write(lagscope__json_writer *w, const lagscope_event *e) {
  lagscope__metrics_tick tick;
  lagscope__metrics_tick_of(e, &tick);
  tick_write(w, &tick);
  metrics_arrays_write(w, e->payload.metrics);
}

/* A hang's report in its event: where it is stored and its heaviest main-thread stack. */
static void report_write(lagscope__json_writer *w, const lagscope_hang_report *report) {
  if (report == NULL) return;
  lagscope__jw_string(w, "report_id", lagscope_report_id(report));
  lagscope__jw_string(w, "report_path", lagscope_report_path(report));
  const char *heaviest = lagscope__hang_report_heaviest_stack(report);
  if (heaviest != NULL) lagscope__jw_raw(w, "heaviest_stack", heaviest);
  const char *cause = lagscope__hang_report_cause(report);
  if (cause != NULL) lagscope__jw_raw(w, "cause", cause);
}

static void body_write(lagscope__json_writer *w, const lagscope_event *e) {
  switch (e->type) {
    case LAGSCOPE_EVENT_HANG_BEGAN:
      lagscope__jw_u64(w, "hang_id", e->as.hang_began.hang_id);
      lagscope__jw_u64(w, "start_ns", e->as.hang_began.start_ns);
      lagscope__jw_i64(w, "start_wall_ms", e->as.hang_began.start_wall_ms);
      lagscope__jw_u64(w, "threshold_ms", e->as.hang_began.threshold_ms);
      break;
    case LAGSCOPE_EVENT_HANG_ENDED:
      lagscope__jw_u64(w, "hang_id", e->as.hang_ended.hang_id);
      lagscope__jw_u64(w, "start_ns", e->as.hang_ended.start_ns);
      lagscope__jw_u64(w, "duration_ns", e->as.hang_ended.duration_ns);
      lagscope__jw_measure(w, "duration_ms", (double)e->as.hang_ended.duration_ns / 1e6);
      lagscope__jw_bool(w, "counted", e->as.hang_ended.counted != 0);
      report_write(w, e->payload.report);
      break;
    case LAGSCOPE_EVENT_HANG_RECOVERED:
      report_write(w, e->payload.report);
      break;
    case LAGSCOPE_EVENT_METRICS:
      if (e->payload.metrics != NULL) metrics_write(w, e);
      break;
    case LAGSCOPE_EVENT_HANG_SAMPLE:
      lagscope__jw_u64(w, "hang_id", e->as.hang_sample.hang_id);
      lagscope__jw_u64(w, "sample_count", e->as.hang_sample.sample_count);
      lagscope__jw_measure(w, "elapsed_ms", (double)e->as.hang_sample.elapsed_ns / 1e6);
      if (e->payload.stack_json != NULL) lagscope__jw_raw(w, "stack", e->payload.stack_json);
      break;
    case LAGSCOPE_EVENT_HITCH:
      lagscope__jw_u64(w, "start_ns", e->as.hitch.start_ns);
      lagscope__jw_measure(w, "duration_ms", (double)e->as.hitch.duration_ns / 1e6);
      lagscope__jw_u64(w, "sample_count", e->as.hitch.sample_count);
      lagscope__jw_string(w, "function",
                          e->as.hitch.function != NULL ? e->as.hitch.function : "");
      lagscope__jw_raw(w, "heaviest_stack",
                       e->payload.stack_json != NULL ? e->payload.stack_json : "[]");
      if (e->as.hitch.cause_json != NULL) lagscope__jw_raw(w, "cause", e->as.hitch.cause_json);
      break;
    case LAGSCOPE_EVENT_SERVER_STARTED:
      lagscope__jw_string(w, "url", e->payload.message != NULL ? e->payload.message : "");
      lagscope__jw_u64(w, "port", e->as.server_started.port);
      break;
    case LAGSCOPE_EVENT_ERROR:
      lagscope__jw_string(w, "code", lagscope_error_name(e->as.error.code));
      lagscope__jw_string(w, "message", e->payload.message != NULL ? e->payload.message : "");
      break;
  }
}

/* Opens an event's object with what every event has. */
static void event_head_write(lagscope__json_writer *w, lagscope_event_type type,
                             uint64_t sequence, uint64_t time_ns) {
  lagscope__jw_begin_object(w, NULL);
  lagscope__jw_string(w, "type", lagscope_event_type_name(type));
  lagscope__jw_u64(w, "seq", sequence);
  lagscope__jw_u64(w, "time_ns", time_ns);
}

char *lagscope__event_text(const lagscope_event *event) {
  if (event == NULL) return NULL;
  lagscope__json_writer w = {0};
  event_head_write(&w, event->type, event->sequence, event->time_ns);
  body_write(&w, event);
  lagscope__jw_end_object(&w);
  return lagscope__jw_finish(&w);
}

char *lagscope__metrics_tick_text(const lagscope__metrics_tick *tick) {
  lagscope__json_writer w = {0};
  event_head_write(&w, LAGSCOPE_EVENT_METRICS, tick->sequence, tick->time_ns);
  tick_write(&w, tick);
  lagscope__jw_end_object(&w);
  return lagscope__jw_finish(&w);
}

char *lagscope_event_json(const lagscope_event *event) {
  char *text = lagscope__event_text(event);
  if (text == NULL) return NULL;
  size_t size = strlen(text) + 1;
  char *copy = malloc(size); /* the caller frees it with lagscope_free */
  if (copy != NULL) memcpy(copy, text, size);
  lagscope__dealloc(text);
  return copy;
}
