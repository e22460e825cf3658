/* Events as JSON: one line per event, the format of the demo's --events jsonl and of the
 * viewer's stream, field by field in docs/guide.md, "Events"; written as text (json_writer.c),
 * not built as a cJSON tree: a metrics event goes out twice a second. 64-bit counters and
 * clocks are written as exact integers (cJSON's numbers are doubles, exact only to 2^53). */
#include "internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A metrics event's numbers: all its members but the arrays. */
static void metrics_numbers_write(lagscope__json_writer *w, const lagscope_metrics *m) {
  const lagscope_frame_metrics *f = &m->frames;
  lagscope__jw_u64(w, "sampled_ns", m->time_ns);
  lagscope__jw_i64(w, "wall_ms", m->wall_ms);
  lagscope__jw_measure(w, "refresh_hz", f->refresh_hz);
  lagscope__jw_measure(w, "fps", f->fps);
  lagscope__jw_u64(w, "frames", f->frames);
  lagscope__jw_u64(w, "dropped", f->dropped);
  lagscope__jw_measure(w, "hitch_ms_per_s", f->hitch_ms_per_s);
  lagscope__jw_string(w, "hitch_band", lagscope_hitch_band_name(f->band));
  lagscope__jw_bool(w, "idle", f->idle != 0);
  lagscope__jw_measure(w, "cadence_hz", f->cadence_hz);
  lagscope__jw_u64(w, "total_frames", f->total_frames);
  lagscope__jw_u64(w, "total_dropped", f->total_dropped);
  lagscope__jw_u64(w, "lost_timestamps", f->lost_timestamps);
  lagscope__jw_measure(w, "cpu_percent", m->cpu_percent);
  lagscope__jw_u64(w, "thread_count", m->thread_count);
  lagscope__jw_u64(w, "rss_bytes", m->rss_bytes);
  lagscope__jw_u64(w, "pss_bytes", m->pss_bytes);
  lagscope__jw_u64(w, "hangs", m->hangs);
  lagscope__jw_bool(w, "hang_in_progress", m->hang_in_progress != 0);
  lagscope__jw_u64(w, "events_published", m->events_published);
  lagscope__jw_u64(w, "events_dropped", m->events_dropped);
  lagscope__jw_measure(w, "monitor_cpu_percent", m->monitor_cpu_percent);
  lagscope__jw_u64(w, "monitor_memory_bytes", m->monitor_memory_bytes);
  lagscope__jw_u64(w, "stopped_ms", m->stopped_ms);
  lagscope__jw_u64(w, "monitor_starved_ms", m->monitor_starved_ms);
  lagscope__jw_u64(w, "monitor_blind_ms", m->monitor_blind_ms);
}

/* Its arrays, which the viewer's window of older ticks leaves out. */
static void metrics_arrays_write(lagscope__json_writer *w, const lagscope_metrics *m) {
  const lagscope_frame_metrics *f = &m->frames;
  lagscope__jw_begin_object(w, "frame_histogram");
  lagscope__jw_begin_array(w, "edges_ms");
  for (int i = 0; i < LAGSCOPE_FRAME_HISTOGRAM_BUCKETS - 1; i++)
    lagscope__jw_measure(w, NULL, lagscope__histogram_edges_ms[i]);
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
  metrics_numbers_write(w, e->payload.metrics);
  metrics_arrays_write(w, e->payload.metrics);
}

/* A stall's signature from its cause's kind and heaviest stack (both as JSON text). */
static void signature_write(lagscope__json_writer *w, const char *cause_json, const char *stack) {
  char kind[16] = "";
  if (cause_json != NULL &&
      !lagscope__json_member_text(cause_json, strlen(cause_json), "kind", kind, sizeof(kind)))
    kind[0] = '\0';
  lagscope__signature *s = lagscope__alloc(sizeof(*s));
  if (s == NULL) return; /* the writer's own allocations fail too: no event is written */
  lagscope__signature_of(kind, stack, s);
  lagscope__signature_write(w, s);
  lagscope__dealloc(s);
}

/* A hang's report in its event: where it is stored, its heaviest main-thread stack, its
 * cause and signature. */
static void report_write(lagscope__json_writer *w, const lagscope_hang_report *report) {
  if (report == NULL) return;
  lagscope__jw_string(w, "report_id", lagscope_report_id(report));
  lagscope__jw_string(w, "report_path", lagscope_report_path(report));
  const char *heaviest = lagscope__hang_report_heaviest_stack(report);
  if (heaviest != NULL) lagscope__jw_raw(w, "heaviest_stack", heaviest);
  const char *cause = lagscope__hang_report_cause(report);
  if (cause != NULL) lagscope__jw_raw(w, "cause", cause);
  if (heaviest != NULL) signature_write(w, cause, heaviest); /* a recovered report: in its file */
}

static void body_write(lagscope__json_writer *w, const lagscope_event *e) {
  switch (e->type) {
    case LAGSCOPE_EVENT_HANG_BEGAN:
      lagscope__jw_u64(w, "hang_id", e->as.hang_began.hang_id);
      lagscope__jw_u64(w, "start_ns", e->as.hang_began.start_ns);
      lagscope__jw_i64(w, "start_wall_ms", e->as.hang_began.start_wall_ms);
      lagscope__jw_u64(w, "threshold_ms", e->as.hang_began.threshold_ms);
      lagscope__jw_string(w, "app_state", e->as.hang_began.startup ? "startup" : "running");
      break;
    case LAGSCOPE_EVENT_HANG_ENDED:
      lagscope__jw_u64(w, "hang_id", e->as.hang_ended.hang_id);
      lagscope__jw_u64(w, "start_ns", e->as.hang_ended.start_ns);
      lagscope__jw_u64(w, "duration_ns", e->as.hang_ended.duration_ns);
      lagscope__jw_measure(w, "duration_ms", (double)e->as.hang_ended.duration_ns / 1e6);
      lagscope__jw_bool(w, "counted", e->as.hang_ended.counted != 0);
      lagscope__jw_string(w, "app_state", e->as.hang_ended.startup ? "startup" : "running");
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
      signature_write(w, e->as.hitch.cause_json, e->payload.stack_json);
      break;
    case LAGSCOPE_EVENT_MONITOR_BLIND:
      lagscope__jw_u64(w, "start_ns", e->as.monitor_blind.start_ns);
      lagscope__jw_measure(w, "duration_ms", (double)e->as.monitor_blind.duration_ns / 1e6);
      lagscope__jw_measure(w, "busy_ms", (double)e->as.monitor_blind.busy_ns / 1e6);
      break;
    case LAGSCOPE_EVENT_HANG_LOST:
      lagscope__jw_string(w, "report_id",
                          e->as.hang_lost.report_id != NULL ? e->as.hang_lost.report_id : "");
      lagscope__jw_u64(w, "hang_id", e->as.hang_lost.hang_id);
      lagscope__jw_i64(w, "pid", e->as.hang_lost.pid);
      if (e->as.hang_lost.start_wall_ms >= 0)
        lagscope__jw_i64(w, "start_wall_ms", e->as.hang_lost.start_wall_ms);
      else
        lagscope__jw_null(w, "start_wall_ms");
      if (e->as.hang_lost.first_sample != NULL)
        lagscope__jw_raw(w, "first_sample", e->as.hang_lost.first_sample);
      else
        lagscope__jw_null(w, "first_sample");
      lagscope__jw_u64(w, "bytes", e->as.hang_lost.bytes);
      lagscope__jw_string(w, "path", e->as.hang_lost.path != NULL ? e->as.hang_lost.path : "");
      lagscope__jw_string(w, "message", e->payload.message != NULL ? e->payload.message : "");
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

char *lagscope__metrics_numbers_text(const lagscope_event *event) {
  lagscope__json_writer w = {0};
  event_head_write(&w, LAGSCOPE_EVENT_METRICS, event->sequence, event->time_ns);
  metrics_numbers_write(&w, event->payload.metrics);
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
