/* Frame math. The main thread only pushes a timestamp into a ring (lagscope_frame); the
 * monitor drains the ring and computes FPS, dropped frames, the hitch time ratio and the
 * frame-time histogram here, on synthetic timestamps in the tests. */
#include "internal.h"

#include <stddef.h>
#include <string.h>

#define NS_PER_SECOND 1000000000u

const double lagscope__histogram_edges_ms[] = LAGSCOPE_FRAME_HISTOGRAM_EDGES_MS;
/* lagscope.h keeps the count beside the list (a public header's count cannot be taken from a
 * braced list in C++): a list that grew or shrank without it does not compile. */
_Static_assert(sizeof(lagscope__histogram_edges_ms) / sizeof(lagscope__histogram_edges_ms[0]) ==
                   LAGSCOPE_FRAME_HISTOGRAM_BUCKETS - 1,
               "LAGSCOPE_FRAME_HISTOGRAM_EDGES_MS holds BUCKETS - 1 edges");

void lagscope__frame_ring_push(lagscope__frame_ring *ring, uint64_t timestamp_ns) {
  uint64_t h = atomic_load_explicit(&ring->head, memory_order_relaxed);
  atomic_store_explicit(&ring->slots[h % LAGSCOPE__FRAME_RING], timestamp_ns,
                        memory_order_relaxed);
  atomic_store_explicit(&ring->head, h + 1, memory_order_release);
}

void lagscope__frame_meter_init(lagscope__frame_meter *m, uint32_t refresh_hz) {
  memset(m, 0, offsetof(lagscope__frame_meter, window_ns)); /* the window: none of it held */
  m->refresh_hz = refresh_hz > 0 ? refresh_hz : 60;
  m->period_ns = NS_PER_SECOND / m->refresh_hz;
}

void lagscope__frame_meter_set_refresh_hz(lagscope__frame_meter *m, uint32_t refresh_hz) {
  if (refresh_hz == 0 || refresh_hz == m->refresh_hz) return;
  m->refresh_hz = refresh_hz;
  m->period_ns = NS_PER_SECOND / refresh_hz;
}

/* Frames the display showed again because this one was late: a frame time of n periods
 * (rounded) missed n - 1 refreshes. Jitter below 1.5 periods misses none. */
static uint64_t dropped_for(uint64_t dt_ns, uint64_t period_ns) {
  uint64_t periods = (dt_ns + period_ns / 2) / period_ns;
  return periods > 1 ? periods - 1 : 0;
}

/* Time past the frame budget, counted only for frames that missed a refresh. */
static uint64_t hitch_for(uint64_t dt_ns, uint64_t period_ns) {
  return dropped_for(dt_ns, period_ns) > 0 ? dt_ns - period_ns : 0;
}

static int histogram_bucket(double ms) {
  int b = 0;
  while (b < LAGSCOPE_FRAME_HISTOGRAM_BUCKETS - 1 && ms > lagscope__histogram_edges_ms[b]) b++;
  return b;
}

/* Forgets the window's first n frames. */
static void window_forget(lagscope__frame_meter *m, uint32_t n) {
  m->window_len -= n;
  memmove(m->window_ns, m->window_ns + n, sizeof(m->window_ns[0]) * m->window_len);
  memmove(m->window_dt_ns, m->window_dt_ns + n, sizeof(m->window_dt_ns[0]) * m->window_len);
}

static void window_push(lagscope__frame_meter *m, uint64_t end_ns, uint64_t dt_ns) {
  /* Over 2 kHz: the oldest are forgotten, a few at a time so as not to move them all for each
   * frame. */
  if (m->window_len == LAGSCOPE__FRAME_WINDOW) window_forget(m, LAGSCOPE__FRAME_WINDOW / 32);
  m->window_ns[m->window_len] = end_ns;
  m->window_dt_ns[m->window_len] = dt_ns;
  m->window_len++;
}

/* Forgets frames that ended at or before cutoff_ns. */
static void window_trim(lagscope__frame_meter *m, uint64_t cutoff_ns) {
  uint32_t n = 0;
  while (n < m->window_len && m->window_ns[n] <= cutoff_ns) n++;
  if (n > 0) window_forget(m, n);
}

void lagscope__frame_meter_set_idle_gap(lagscope__frame_meter *m, uint64_t idle_gap_ns) {
  m->idle_gap_ns = idle_gap_ns;
}

void lagscope__frame_meter_late(lagscope__frame_meter *m, uint64_t start_ns, uint64_t end_ns) {
  m->late[m->late_next] = (lagscope__late_period){start_ns, end_ns};
  m->late_next = (m->late_next + 1) % LAGSCOPE__LATE_PERIODS;
  if (m->late_count < LAGSCOPE__LATE_PERIODS) m->late_count++;
}

void lagscope__frame_meter_late_now(lagscope__frame_meter *m, uint64_t since_ns) {
  m->late_since_ns = since_ns;
}

/* The earliest moment in (from, to) at which the main thread was late; 0 if it never was. */
static uint64_t late_start_within(const lagscope__frame_meter *m, uint64_t from, uint64_t to) {
  uint64_t earliest = 0;
  for (uint32_t k = 0; k < m->late_count; k++) {
    const lagscope__late_period *p = &m->late[k];
    if (p->start_ns >= to || p->end_ns <= from) continue;
    uint64_t start = p->start_ns > from ? p->start_ns : from;
    if (earliest == 0 || start < earliest) earliest = start;
  }
  if (m->late_since_ns != 0 && m->late_since_ns < to) {
    uint64_t start = m->late_since_ns > from ? m->late_since_ns : from;
    if (earliest == 0 || start < earliest) earliest = start;
  }
  return earliest;
}

/* The frame time of a gap: from the lateness's start when the main thread was late in it,
 * 0 (idle) when it was long and never late, else the gap. */
static uint64_t frame_time(const lagscope__frame_meter *m, uint64_t from, uint64_t to) {
  uint64_t dt = to - from;
  if (m->idle_gap_ns == 0 || dt < m->idle_gap_ns) return dt;
  uint64_t late = late_start_within(m, from, to);
  return late != 0 ? to - late + m->period_ns : 0;
}

/* The budget a frame is judged against: the app's own steady pace when it has one, else the
 * display's refresh period. */
static uint64_t budget_ns(const lagscope__frame_meter *m) {
  return m->cadence_ns != 0 ? m->cadence_ns : m->period_ns;
}

/* The app's own steady frame time over the last second's frames, when it paces them slower
 * than the display by design (a game's 35 Hz tic, a 30 fps video), so that its every frame is
 * not called late; 0 when its frames follow the display. Steady: CADENCE_STEADY_PERCENT of the
 * frame times lie within one display period of their median (a vsync'd 35 fps alternates 1 and
 * 2 refreshes), and their mean is 1.5 periods or more. Whether slow by design or just slow, a
 * steady pace is the app's own; the metrics say so (cadence_hz), and the fps stays the fps. */
#define CADENCE_FRAMES_MIN 8
#define CADENCE_STEADY_PERCENT 90

static int compare_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

static uint64_t steady_cadence_ns(const lagscope__frame_meter *m) {
  uint64_t dts[LAGSCOPE__FRAME_WINDOW];
  uint32_t n = 0;
  for (uint32_t i = 0; i < m->window_len; i++)
    if (m->window_dt_ns[i] != 0) dts[n++] = m->window_dt_ns[i];
  if (n < CADENCE_FRAMES_MIN) return 0;
  lagscope__sort(dts, n, sizeof(dts[0]), compare_u64);
  uint64_t median = dts[n / 2], low = median > m->period_ns ? median - m->period_ns : 0;
  uint64_t high = median + m->period_ns, sum = 0;
  uint32_t steady = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (dts[i] < low || dts[i] > high) continue;
    sum += dts[i];
    steady++;
  }
  if (steady * 100u < n * CADENCE_STEADY_PERCENT) return 0;
  uint64_t mean = sum / steady;
  return mean * 2u >= m->period_ns * 3u ? mean : 0;
}

void lagscope__frame_meter_add(lagscope__frame_meter *m, uint64_t timestamp_ns) {
  if (m->last_ns != 0 && timestamp_ns < m->last_ns) return; /* not monotonic: ignore */
  uint64_t dt = m->last_ns != 0 ? frame_time(m, m->last_ns, timestamp_ns) : 0;
  m->last_ns = timestamp_ns;
  m->total_frames++;
  window_push(m, timestamp_ns, dt);
  if (dt == 0) return; /* the first frame, or the first after idle, has no frame time */
  double ms = (double)dt / 1e6;
  m->total_dropped += dropped_for(dt, budget_ns(m));
  m->histogram[histogram_bucket(ms)]++;
  m->time_sum_ms += ms;
  m->recent_ms[m->recent_next] = (float)ms;
  m->recent_next = (m->recent_next + 1) % LAGSCOPE_RECENT_FRAMES;
  if (m->recent_count < LAGSCOPE_RECENT_FRAMES) m->recent_count++;
}

void lagscope__frame_meter_drain(lagscope__frame_meter *m, lagscope__frame_ring *ring) {
  uint64_t head = atomic_load_explicit(&ring->head, memory_order_acquire);
  if (head - m->read > LAGSCOPE__FRAME_RING) { /* the main thread lapped us */
    m->lost_timestamps += head - m->read - LAGSCOPE__FRAME_RING;
    m->read = head - LAGSCOPE__FRAME_RING;
  }
  for (; m->read < head; m->read++) {
    uint64_t ts = atomic_load_explicit(&ring->slots[m->read % LAGSCOPE__FRAME_RING],
                                       memory_order_relaxed);
    /* A slot overwritten while we read it holds a later frame: drop what we cannot trust. */
    uint64_t now_head = atomic_load_explicit(&ring->head, memory_order_acquire);
    if (now_head - m->read > LAGSCOPE__FRAME_RING) {
      m->lost_timestamps++;
      continue;
    }
    lagscope__frame_meter_add(m, ts);
  }
}

/* Each band's floor, from the list in lagscope.h. */
static const double band_floor_ms_per_s[] = {
#define LAGSCOPE_HITCH_BAND_FLOOR_(name, text, floor_ms_per_s) floor_ms_per_s,
    LAGSCOPE_HITCH_BANDS(LAGSCOPE_HITCH_BAND_FLOOR_)
#undef LAGSCOPE_HITCH_BAND_FLOOR_
};

lagscope_hitch_band lagscope__hitch_band(double hitch_ms_per_s) {
  /* The last band whose floor it is above (a NaN, which no comparison holds for: the last). */
  size_t band = sizeof(band_floor_ms_per_s) / sizeof(band_floor_ms_per_s[0]) - 1;
  while (band > 0 && hitch_ms_per_s <= band_floor_ms_per_s[band]) band--;
  return (lagscope_hitch_band)band;
}

void lagscope__frame_meter_report(lagscope__frame_meter *m, uint64_t now_ns,
                                  lagscope_frame_metrics *out) {
  if (now_ns > NS_PER_SECOND) window_trim(m, now_ns - NS_PER_SECOND);
  memset(out, 0, sizeof(*out));
  out->refresh_hz = m->refresh_hz;
  m->cadence_ns = steady_cadence_ns(m);
  out->cadence_hz = m->cadence_ns != 0 ? 1e9 / (double)m->cadence_ns : 0.0;
  uint64_t budget = budget_ns(m), hitch_ns = 0;
  for (uint32_t i = 0; i < m->window_len; i++) {
    out->dropped += (uint32_t)dropped_for(m->window_dt_ns[i], budget);
    hitch_ns += hitch_for(m->window_dt_ns[i], budget);
  }
  /* Late now: the frame in progress is late, for its part within the last second. */
  if (m->late_since_ns != 0 && m->last_ns != 0 && now_ns > m->last_ns) {
    uint64_t from = m->last_ns;
    if (now_ns > NS_PER_SECOND && from < now_ns - NS_PER_SECOND) from = now_ns - NS_PER_SECOND;
    out->dropped += (uint32_t)dropped_for(now_ns - from, budget);
    hitch_ns += hitch_for(now_ns - from, budget);
  }
  out->idle = m->late_since_ns == 0 && m->idle_gap_ns != 0 &&
              (m->last_ns == 0 || (now_ns > m->last_ns && now_ns - m->last_ns >= m->idle_gap_ns));
  out->frames = m->window_len;
  out->fps = (double)m->window_len; /* frames within the last second */
  out->hitch_ms_per_s = (double)hitch_ns / 1e6;
  out->band = lagscope__hitch_band(out->hitch_ms_per_s);
  out->total_frames = m->total_frames;
  out->total_dropped = m->total_dropped;
  out->lost_timestamps = m->lost_timestamps;
  memcpy(out->histogram, m->histogram, sizeof(out->histogram));
  out->time_sum_ms = m->time_sum_ms;
  out->recent_count = m->recent_count;
  uint32_t oldest = (m->recent_next + LAGSCOPE_RECENT_FRAMES - m->recent_count) %
                    LAGSCOPE_RECENT_FRAMES;
  for (uint32_t k = 0; k < m->recent_count; k++)
    out->recent_ms[k] = m->recent_ms[(oldest + k) % LAGSCOPE_RECENT_FRAMES];
}
