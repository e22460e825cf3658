/* The viewer's window of older metrics ticks (api.c keeps LAGSCOPE__WEB_METRICS_WINDOW of them):
 * each kept as its numbers, not as text, and written when /api/v1/metrics asks, as the event's
 * text without its arrays (core/deliver/event_json.c). */
#include "http.h"

void lagscope__web_metrics_tick_of(const lagscope_event *event, lagscope__web_metrics_tick *out) {
  const lagscope_metrics *m = event->payload.metrics;
  const lagscope_frame_metrics *f = &m->frames;
  *out = (lagscope__web_metrics_tick){
      .sequence = event->sequence, .time_ns = event->time_ns, .read_at_ns = m->time_ns,
      .wall_ms = m->wall_ms, .refresh_hz = f->refresh_hz, .cadence_hz = f->cadence_hz,
      .fps = f->fps,
      .hitch_ms_per_s = f->hitch_ms_per_s, .cpu_percent = m->cpu_percent,
      .monitor_cpu_percent = m->monitor_cpu_percent, .total_frames = f->total_frames,
      .total_dropped = f->total_dropped, .lost_timestamps = f->lost_timestamps,
      .rss_bytes = m->rss_bytes, .pss_bytes = m->pss_bytes, .hangs = m->hangs,
      .events_published = m->events_published, .events_dropped = m->events_dropped,
      .monitor_memory_bytes = m->monitor_memory_bytes, .stopped_ms = m->stopped_ms,
      .monitor_starved_ms = m->monitor_starved_ms, .monitor_blind_ms = m->monitor_blind_ms,
      .frames = f->frames, .dropped = f->dropped,
      .thread_count = m->thread_count, .band = (uint8_t)f->band, .idle = f->idle != 0,
      .hang_in_progress = m->hang_in_progress != 0};
}

/* The tick's numbers back in a metrics event, whose text the core writes. A */
char *lagscope__web_metrics_tick_text(const lagscope__web_metrics_tick *t) {
  lagscope_metrics m = {
      .time_ns = t->read_at_ns, .wall_ms = t->wall_ms, .cpu_percent = t->cpu_percent,
      .monitor_cpu_percent = t->monitor_cpu_percent, .rss_bytes = t->rss_bytes,
      .pss_bytes = t->pss_bytes, .hangs = t->hangs, .events_published = t->events_published,
      .events_dropped = t->events_dropped, .monitor_memory_bytes = t->monitor_memory_bytes,
      .stopped_ms = t->stopped_ms, .monitor_starved_ms = t->monitor_starved_ms,
      .monitor_blind_ms = t->monitor_blind_ms,
      .thread_count = t->thread_count, .hang_in_progress = t->hang_in_progress};
  lagscope_frame_metrics *f = &m.frames;
  f->refresh_hz = t->refresh_hz, f->fps = t->fps, f->hitch_ms_per_s = t->hitch_ms_per_s;
  f->cadence_hz = t->cadence_hz;
  f->total_frames = t->total_frames, f->total_dropped = t->total_dropped;
  f->lost_timestamps = t->lost_timestamps, f->frames = t->frames, f->dropped = t->dropped;
  f->band = (lagscope_hitch_band)t->band, f->idle = t->idle;
  lagscope_event event = {.type = LAGSCOPE_EVENT_METRICS, .sequence = t->sequence,
                          .time_ns = t->time_ns, .payload.metrics = &m};
  return lagscope__metrics_numbers_text(&event);
}
