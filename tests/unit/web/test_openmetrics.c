/* /metrics's numbers and text (web/openmetrics.c), from events made here: hangs by kind (idle
 * ones left out), the hang duration histogram (cumulative buckets, sum, count) and the p95
 * Prometheus's histogram_quantile reads from it, hitches, blind spells, the process's CPU
 * seconds (a counter that only grows), the frame-time histogram (with its sum and count) and
 * gauges once a metrics event came (none before), lagscope_info and lagscope_build_info with
 * a hostile app name escaped on one line, and what differs between OpenMetrics and the
 * Prometheus text format 0.0.4. (Prometheus and promtool read it for real in
 * tests/integration/web/prometheus.test.js.) */
#define _POSIX_C_SOURCE 200809L
#include "http.h"

#include "cases.h"
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void has(const char *text, const char *line) {
  CHECK_MSG(strstr(text, line) != NULL, "no \"%s\" in:\n%s", line, text);
}
static void lacks(const char *text, const char *line) {
  CHECK_MSG(strstr(text, line) == NULL, "\"%s\" in:\n%s", line, text);
}

/* A hang_ended event of the kind, duration_ms long; counted or not. */
static void hang(lagscope__web_openmetrics *m, const char *kind, uint64_t ms, int counted) {
  char *cause = lagscope__alloc(64);
  CHECK(cause != NULL);
  snprintf(cause, 64, "{\"kind\":\"%s\",\"summary\":\"s\",\"label\":\"l\"}", kind);
  lagscope_hang_report *report = lagscope__hang_report_new("id", 1, "", NULL, NULL);
  CHECK(report != NULL);
  lagscope__hang_report_set_cause(report, cause);
  lagscope_event e = {.type = LAGSCOPE_EVENT_HANG_ENDED};
  e.as.hang_ended.duration_ns = ms * 1000000u;
  e.as.hang_ended.counted = counted;
  e.payload.report = report;
  lagscope__web_openmetrics_count(m, &e);
  lagscope_release(report);
}

static char *text_of(const lagscope__web_openmetrics *m, const char *app, int om) {
  char *text = lagscope__web_openmetrics_text(m, app, 4242, om);
  CHECK(text != NULL);
  return text;
}

static void test_hangs_by_kind_and_duration(void) {
  lagscope__web_openmetrics m = {0};
  hang(&m, "sleep", 300, 1);
  hang(&m, "sleep", 600, 1);
  hang(&m, "lock", 1500, 1);
  hang(&m, "idle", 900, 0); /* reported, not counted */
  hang(&m, "strange", 40000, 1); /* a kind this build does not know: unknown */
  lagscope_event hitch = {.type = LAGSCOPE_EVENT_HITCH};
  lagscope__web_openmetrics_count(&m, &hitch);
  lagscope__web_openmetrics_count(&m, &hitch);
  char *t = text_of(&m, "demo", 0);
  has(t, "\nlagscope_hangs_total{kind=\"sleep\"} 2\n");
  has(t, "\nlagscope_hangs_total{kind=\"lock\"} 1\n");
  has(t, "\nlagscope_hangs_total{kind=\"cpu\"} 0\n");
  has(t, "\nlagscope_hangs_total{kind=\"unknown\"} 1\n");
  lacks(t, "kind=\"idle\"");
  has(t, "\nlagscope_hang_duration_seconds_bucket{le=\"0.25\"} 0\n");
  has(t, "\nlagscope_hang_duration_seconds_bucket{le=\"0.5\"} 1\n");
  has(t, "\nlagscope_hang_duration_seconds_bucket{le=\"1\"} 2\n");
  has(t, "\nlagscope_hang_duration_seconds_bucket{le=\"2\"} 3\n");
  has(t, "\nlagscope_hang_duration_seconds_bucket{le=\"30\"} 3\n");
  has(t, "\nlagscope_hang_duration_seconds_bucket{le=\"+Inf\"} 4\n");
  has(t, "\nlagscope_hang_duration_seconds_sum 42.400000\n");
  has(t, "\nlagscope_hang_duration_seconds_count 4\n");
  has(t, "\nlagscope_hitches_total 2\n");
  lacks(t, "lagscope_fps"); /* no metrics event yet: no gauge made up */
  lagscope__dealloc(t);
}

static void test_frames_and_gauges(void) {
  lagscope__web_openmetrics m = {0};
  lagscope_metrics metrics = {.cpu_percent = 150, .rss_bytes = 123456789012ull, .thread_count = 7};
  metrics.frames.fps = 59.5;
  metrics.frames.total_frames = 100;
  metrics.frames.time_sum_ms = 1234.5;
  for (int b = 0; b < LAGSCOPE_FRAME_HISTOGRAM_BUCKETS; b++) metrics.frames.histogram[b] = 10;
  lagscope_event e = {.type = LAGSCOPE_EVENT_METRICS, .payload.metrics = &metrics};
  lagscope__web_openmetrics_count(&m, &e);
  char *t = text_of(&m, "demo", 0);
  has(t, "\nlagscope_frame_time_seconds_bucket{le=\"0.01\"} 10\n");
  has(t, "\nlagscope_frame_time_seconds_bucket{le=\"0.0125\"} 20\n");
  has(t, "\nlagscope_frame_time_seconds_bucket{le=\"1\"} 90\n");
  has(t, "\nlagscope_frame_time_seconds_bucket{le=\"+Inf\"} 100\n");
  has(t, "\nlagscope_frame_time_seconds_sum 1.234500\n");
  has(t, "\nlagscope_frame_time_seconds_count 100\n"); /* the +Inf bucket's */
  has(t, "\nlagscope_frames_total 100\n");
  has(t, "\nlagscope_fps 59.500\n");
  has(t, "\nlagscope_cpu_usage_ratio 1.500000\n");
  has(t, "\nlagscope_resident_memory_bytes 123456789012\n"); /* exact, not %g */
  has(t, "\nlagscope_threads 7\n");
  lagscope__dealloc(t);
}

/* Prometheus's histogram_quantile over the text's hang buckets: the bucket the rank falls in,
 * linearly between its bounds (the +Inf bucket: its lower bound). */
static double hang_quantile(const char *text, double q) {
  const char *prefix = "\nlagscope_hang_duration_seconds_bucket{le=\"";
  double lower = 0, lower_count = 0, bounds[32], counts[32];
  int n = 0;
  for (const char *p = strstr(text, prefix); p != NULL && n < 32; p = strstr(p + 1, prefix)) {
    const char *le = p + strlen(prefix);
    bounds[n] = strncmp(le, "+Inf", 4) == 0 ? -1 : strtod(le, NULL);
    counts[n++] = strtod(strstr(le, "} ") + 2, NULL);
  }
  CHECK(n > 1 && bounds[n - 1] < 0);
  double rank = q * counts[n - 1];
  for (int b = 0; b < n; b++) {
    if (counts[b] < rank) {
      lower = bounds[b], lower_count = counts[b];
      continue;
    }
    if (bounds[b] < 0) return lower;
    return lower + (bounds[b] - lower) * (rank - lower_count) / (counts[b] - lower_count);
  }
  return -1;
}

/* Every hang 0.58 s long: the p95 the docs' query gives is about 0.58 s (0.975 s with buckets
 * 0.5 and 1 alone), as is the median; the bounds the issue asked for are there. */
static void test_hang_p95(void) {
  lagscope__web_openmetrics m = {0};
  for (int i = 0; i < 20; i++) hang(&m, "sleep", 575 + (uint64_t)(i % 3) * 5, 1);
  char *t = text_of(&m, "demo", 0);
  double p95 = hang_quantile(t, 0.95), p50 = hang_quantile(t, 0.5);
  CHECK_MSG(p95 >= 0.55 && p95 <= 0.6, "p95 of hangs of 0.58 s: %.3f s\n%s", p95, t);
  CHECK_MSG(p50 >= 0.5 && p50 <= 0.6, "median of hangs of 0.58 s: %.3f s", p50);
  const char *wanted[] = {"0.25", "0.5", "0.75", "1", "2", "5", "10"};
  for (size_t i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++) {
    char line[96];
    snprintf(line, sizeof(line), "\nlagscope_hang_duration_seconds_bucket{le=\"%s\"} ", wanted[i]);
    has(t, line);
  }
  lagscope__dealloc(t);
}

/* monitor_blind events: counted, and their durations summed in seconds. */
static void test_blind_spells(void) {
  lagscope__web_openmetrics m = {0};
  char *t = text_of(&m, "demo", 0);
  has(t, "\nlagscope_blind_spells_total 0\n"); /* present from the start, at 0 */
  lagscope__dealloc(t);
  lagscope_event blind = {.type = LAGSCOPE_EVENT_MONITOR_BLIND};
  blind.as.monitor_blind.duration_ns = 70000000u;
  lagscope__web_openmetrics_count(&m, &blind);
  blind.as.monitor_blind.duration_ns = 130000000u;
  lagscope__web_openmetrics_count(&m, &blind);
  t = text_of(&m, "demo", 1);
  has(t, "# TYPE lagscope_blind_spells counter\n");
  has(t, "\nlagscope_blind_spells_total 2\n");
  has(t, "\nlagscope_blind_spell_seconds_total 0.200000\n");
  lagscope__dealloc(t);
}

static double sample_value(const char *text, const char *name) {
  char line[128];
  snprintf(line, sizeof(line), "\n%s ", name);
  const char *p = strstr(text, line);
  CHECK_MSG(p != NULL, "no %s in:\n%s", name, text);
  return strtod(p + strlen(line), NULL);
}

/* The process's CPU as a counter of seconds, user and system: there before any metrics sample,
 * and grown after a burn of CPU (the gauge of the last sample stays beside it). */
static void test_cpu_seconds(void) {
  lagscope__web_openmetrics m = {0};
  char *t = text_of(&m, "demo", 0);
  has(t, "# TYPE lagscope_process_cpu_seconds_total counter\n");
  double before = sample_value(t, "lagscope_process_cpu_seconds_total");
  lagscope__dealloc(t);
  struct timespec start, now; /* 60 ms on the CPU, however loaded the machine */
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &start);
  volatile uint64_t spin = 0;
  do {
    spin++;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  } while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) < 60000000L);
  t = text_of(&m, "demo", 1);
  has(t, "# TYPE lagscope_process_cpu_seconds counter\n");
  double after = sample_value(t, "lagscope_process_cpu_seconds_total");
  CHECK_MSG(after >= before + 0.03, "CPU seconds %.6f then %.6f after 60 ms of work", before, after);
  lagscope__dealloc(t);
}

/* lagscope_build_info: the app's name and version (config.app_version), lagscope's. */
static void test_build_info(void) {
  lagscope__web_openmetrics m = {0};
  snprintf(m.app_version, sizeof(m.app_version), "2.1.0-rc\"1");
  char *text = text_of(&m, "demo", 0), *om = text_of(&m, "demo", 1);
  const char *line = "\nlagscope_build_info{app=\"demo\",version=\"2.1.0-rc\\\"1\","
                     "lagscope_version=\"" LAGSCOPE_VERSION_STRING "\"} 1\n";
  has(text, "# TYPE lagscope_build_info gauge\n");
  has(text, line);
  has(om, "# TYPE lagscope_build info\n");
  has(om, line);
  lagscope__dealloc(text);
  lagscope__dealloc(om);
}

static void test_formats(void) {
  lagscope__web_openmetrics m = {0};
  char *text = text_of(&m, "demo", 0), *om = text_of(&m, "demo", 1);
  has(text, "# TYPE lagscope_hangs_total counter\n");
  has(text, "# TYPE lagscope_info gauge\n");
  lacks(text, "# EOF");
  has(om, "# TYPE lagscope_hangs counter\n");
  has(om, "# TYPE lagscope_hitches counter\n");
  has(om, "# TYPE lagscope info\n");
  has(om, "\nlagscope_hangs_total{kind=\"sleep\"} 0\n"); /* the sample keeps _total */
  size_t n = strlen(om);
  CHECK(n > 6 && strcmp(om + n - 6, "# EOF\n") == 0);
  CHECK(strstr(om, "# EOF") == om + n - 6); /* once, at the end */
  has(om, "lagscope_info{app=\"demo\",version=\"" LAGSCOPE_VERSION_STRING "\",pid=\"4242\"} 1\n");
  lagscope__dealloc(text);
  lagscope__dealloc(om);
}

static void test_hostile_app_name(void) {
  lagscope__web_openmetrics m = {0};
  char *t = text_of(&m, "a\"b\\c\nd} 2\n# EOF", 1);
  has(t, "lagscope_info{app=\"a\\\"b\\\\c\\nd} 2\\n# EOF\",version=");
  CHECK(strstr(t, "# EOF") != NULL && strstr(strstr(t, "# EOF") + 1, "# EOF") != NULL);
  size_t n = strlen(t);
  CHECK(strcmp(t + n - 6, "# EOF\n") == 0);
  lagscope__dealloc(t);
  char big[20000];
  memset(big, 'x', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  t = text_of(&m, big, 1); /* past the first buffer: written whole in a larger one */
  CHECK(strstr(t, big) != NULL);
  n = strlen(t);
  CHECK(strcmp(t + n - 6, "# EOF\n") == 0);
  lagscope__dealloc(t);
}

static const test_case cases[] = {
    TEST_CASE(hangs_by_kind_and_duration),
    TEST_CASE(frames_and_gauges),
    TEST_CASE(hang_p95),
    TEST_CASE(blind_spells),
    TEST_CASE(cpu_seconds),
    TEST_CASE(build_info),
    TEST_CASE(formats),
    TEST_CASE(hostile_app_name),
};

int main(int argc, char **argv) { return run_test_case(argc, argv, cases, CASE_COUNT(cases)); }
