/* Events as JSON, through cJSON: one line per event, the format of the demo's --events jsonl
 * and of the viewer's stream. Field by field in README.md, "Events". 64-bit counters and
 * clocks are written as exact integers (cJSON's numbers are doubles, exact only to 2^53). */
#include "internal.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const double histogram_edges_ms[LAGSCOPE_FRAME_HISTOGRAM_BUCKETS - 1] =
    LAGSCOPE_FRAME_HISTOGRAM_EDGES_MS;

/* Numbers are written as text here, not by cJSON: it prints each with sprintf and reads it
 * back with sscanf, and on an idle app's path (a metrics event each 500 ms) those are the
 * only callers of libc's formatting code, 64 KiB pages of it made resident, and ~1 µs a
 * number. */

/* value's decimal digits into out (NUL-terminated); its length. F */
static size_t u64_text(uint64_t value, char *out) {
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
  if (value >= 0) return u64_text((uint64_t)value, out);
  out[0] = '-';
  return 1 + u64_text(0 - (uint64_t)value, out + 1);
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
  n += u64_text(magnitude / 1000, out + n);
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
  u64_text(value, text);
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

static cJSON *u64_item(uint64_t value) {
  char text[24];
  u64_text(value, text);
  return cJSON_CreateRaw(text);
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

static void add_frames(cJSON *o, const lagscope_frame_metrics *f) {
  lagscope__json_add_measure(o, "refresh_hz", f->refresh_hz);
  lagscope__json_add_measure(o, "fps", f->fps);
  lagscope__json_add_u64(o, "frames", f->frames);
  lagscope__json_add_u64(o, "dropped", f->dropped);
  lagscope__json_add_measure(o, "hitch_ms_per_s", f->hitch_ms_per_s);
  cJSON_AddStringToObject(o, "hitch_band", lagscope_hitch_band_name(f->band));
  cJSON_AddBoolToObject(o, "idle", f->idle);
  lagscope__json_add_u64(o, "total_frames", f->total_frames);
  lagscope__json_add_u64(o, "total_dropped", f->total_dropped);
  lagscope__json_add_u64(o, "lost_timestamps", f->lost_timestamps);
  cJSON *histogram = cJSON_AddObjectToObject(o, "frame_histogram");
  cJSON *edges = cJSON_AddArrayToObject(histogram, "edges_ms");
  for (int i = 0; i < LAGSCOPE_FRAME_HISTOGRAM_BUCKETS - 1; i++)
    cJSON_AddItemToArray(edges, measure_item(histogram_edges_ms[i]));
  cJSON *counts = cJSON_AddArrayToObject(histogram, "counts");
  for (int i = 0; i < LAGSCOPE_FRAME_HISTOGRAM_BUCKETS; i++)
    cJSON_AddItemToArray(counts, u64_item(f->histogram[i]));
  cJSON *recent = cJSON_AddArrayToObject(o, "recent_frame_ms");
  for (uint32_t i = 0; i < f->recent_count; i++)
    cJSON_AddItemToArray(recent, measure_item(f->recent_ms[i]));
}

static void add_metrics(cJSON *o, const lagscope_metrics *m) {
  lagscope__json_add_u64(o, "sampled_ns", m->time_ns);
  lagscope__json_add_i64(o, "wall_ms", m->wall_ms);
  add_frames(o, &m->frames);
  lagscope__json_add_measure(o, "cpu_percent", m->cpu_percent);
  lagscope__json_add_u64(o, "thread_count", m->thread_count);
  lagscope__json_add_u64(o, "rss_bytes", m->rss_bytes);
  lagscope__json_add_u64(o, "pss_bytes", m->pss_bytes);
  cJSON *busiest = cJSON_AddArrayToObject(o, "busiest_threads");
  for (uint32_t i = 0; i < m->busiest_count; i++) {
    cJSON *t = cJSON_CreateObject();
    lagscope__json_add_i64(t, "tid", m->busiest[i].tid);
    cJSON_AddStringToObject(t, "name", m->busiest[i].name);
    lagscope__json_add_measure(t, "cpu_percent", m->busiest[i].cpu_percent);
    cJSON_AddItemToArray(busiest, t);
  }
  lagscope__json_add_u64(o, "hangs", m->hangs);
  cJSON_AddBoolToObject(o, "hang_in_progress", m->hang_in_progress);
  lagscope__json_add_u64(o, "events_published", m->events_published);
  lagscope__json_add_u64(o, "events_dropped", m->events_dropped);
  lagscope__json_add_measure(o, "monitor_cpu_percent", m->monitor_cpu_percent);
  lagscope__json_add_u64(o, "monitor_memory_bytes", m->monitor_memory_bytes);
  lagscope__json_add_u64(o, "stopped_ms", m->stopped_ms);
  lagscope__json_add_u64(o, "monitor_starved_ms", m->monitor_starved_ms);
}

/* A hang's report in its event: where it is stored and its heaviest main-thread stack. */
static void add_report(cJSON *o, const lagscope_hang_report *report) {
  if (report == NULL) return;
  cJSON_AddStringToObject(o, "report_id", lagscope_report_id(report));
  cJSON_AddStringToObject(o, "report_path", lagscope_report_path(report));
  const char *heaviest = lagscope__hang_report_heaviest_stack(report);
  if (heaviest != NULL) cJSON_AddRawToObject(o, "heaviest_stack", heaviest);
  const char *cause = lagscope__hang_report_cause(report);
  if (cause != NULL) cJSON_AddRawToObject(o, "cause", cause);
}

static void add_body(cJSON *o, const lagscope_event *e) {
  switch (e->type) {
    case LAGSCOPE_EVENT_HANG_BEGAN:
      lagscope__json_add_u64(o, "hang_id", e->as.hang_began.hang_id);
      lagscope__json_add_u64(o, "start_ns", e->as.hang_began.start_ns);
      lagscope__json_add_i64(o, "start_wall_ms", e->as.hang_began.start_wall_ms);
      lagscope__json_add_u64(o, "threshold_ms", e->as.hang_began.threshold_ms);
      break;
    case LAGSCOPE_EVENT_HANG_ENDED:
      lagscope__json_add_u64(o, "hang_id", e->as.hang_ended.hang_id);
      lagscope__json_add_u64(o, "start_ns", e->as.hang_ended.start_ns);
      lagscope__json_add_u64(o, "duration_ns", e->as.hang_ended.duration_ns);
      lagscope__json_add_measure(o, "duration_ms", (double)e->as.hang_ended.duration_ns / 1e6);
      cJSON_AddBoolToObject(o, "counted", e->as.hang_ended.counted != 0);
      add_report(o, e->payload.report);
      break;
    case LAGSCOPE_EVENT_HANG_RECOVERED:
      add_report(o, e->payload.report);
      break;
    case LAGSCOPE_EVENT_METRICS:
      if (e->payload.metrics != NULL) add_metrics(o, e->payload.metrics);
      break;
    case LAGSCOPE_EVENT_HANG_SAMPLE:
      lagscope__json_add_u64(o, "hang_id", e->as.hang_sample.hang_id);
      lagscope__json_add_u64(o, "sample_count", e->as.hang_sample.sample_count);
      lagscope__json_add_measure(o, "elapsed_ms", (double)e->as.hang_sample.elapsed_ns / 1e6);
      if (e->payload.stack_json != NULL) cJSON_AddRawToObject(o, "stack", e->payload.stack_json);
      break;
    case LAGSCOPE_EVENT_HITCH:
      lagscope__json_add_u64(o, "start_ns", e->as.hitch.start_ns);
      lagscope__json_add_measure(o, "duration_ms", (double)e->as.hitch.duration_ns / 1e6);
      lagscope__json_add_u64(o, "sample_count", e->as.hitch.sample_count);
      cJSON_AddStringToObject(o, "function",
                              e->as.hitch.function != NULL ? e->as.hitch.function : "");
      cJSON_AddRawToObject(o, "heaviest_stack",
                           e->payload.stack_json != NULL ? e->payload.stack_json : "[]");
      if (e->as.hitch.cause_json != NULL) cJSON_AddRawToObject(o, "cause", e->as.hitch.cause_json);
      break;
    case LAGSCOPE_EVENT_SERVER_STARTED:
      cJSON_AddStringToObject(o, "url", e->payload.message != NULL ? e->payload.message : "");
      lagscope__json_add_u64(o, "port", e->as.server_started.port);
      break;
    case LAGSCOPE_EVENT_ERROR:
      cJSON_AddStringToObject(o, "code", lagscope_error_name(e->as.error.code));
      cJSON_AddStringToObject(o, "message", e->payload.message != NULL ? e->payload.message : "");
      break;
  }
}

/* Printed into a block of lagscope's own, doubled until the text fits (cJSON says when it does
 * not), then copied into one of its length when that halves what is kept. */
char *lagscope__json_print(const cJSON *doc) {
  for (size_t size = 16384; size <= (size_t)INT_MAX; size *= 2) {
    char *text = lagscope__alloc(size);
    if (text == NULL) return NULL;
    if (!cJSON_PrintPreallocated((cJSON *)doc, text, (int)size, 0)) {
      lagscope__dealloc(text);
      continue;
    }
    size_t length = strlen(text) + 1;
    if (length > size / 2) return text;
    char *exact = lagscope__alloc(length);
    if (exact != NULL) memcpy(exact, text, length);
    lagscope__dealloc(text);
    return exact;
  }
  return NULL;
}

char *lagscope_event_json(const lagscope_event *event) {
  if (event == NULL) return NULL;
  cJSON *o = cJSON_CreateObject();
  if (o == NULL) return NULL;
  cJSON_AddStringToObject(o, "type", lagscope_event_type_name(event->type));
  lagscope__json_add_u64(o, "seq", event->sequence);
  lagscope__json_add_u64(o, "time_ns", event->time_ns);
  add_body(o, event);
  char *text = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  return text;
}
