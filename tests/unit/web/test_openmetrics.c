/* /metrics's numbers and text (web/openmetrics.c), from events made here: hangs by kind (idle
 * ones left out), the hang duration histogram (cumulative buckets, sum, count), hitches, the
 * frame-time histogram and gauges once a metrics event came (none before), lagscope_info with
 * a hostile app name escaped on one line, and what differs between OpenMetrics and the
 * Prometheus text format 0.0.4. (Prometheus and promtool read it for real in
 * tests/integration/web/prometheus.test.js.) */
#include "http.h"

#include "cases.h"
#include "check.h"

#include <stdio.h>
#include <string.h>

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
  for (int b = 0; b < LAGSCOPE_FRAME_HISTOGRAM_BUCKETS; b++) metrics.frames.histogram[b] = 10;
  lagscope_event e = {.type = LAGSCOPE_EVENT_METRICS, .payload.metrics = &metrics};
  lagscope__web_openmetrics_count(&m, &e);
  char *t = text_of(&m, "demo", 0);
  has(t, "\nlagscope_frame_time_seconds_bucket{le=\"0.01\"} 10\n");
  has(t, "\nlagscope_frame_time_seconds_bucket{le=\"0.0125\"} 20\n");
  has(t, "\nlagscope_frame_time_seconds_bucket{le=\"1\"} 90\n");
  has(t, "\nlagscope_frame_time_seconds_bucket{le=\"+Inf\"} 100\n");
  lacks(t, "lagscope_frame_time_seconds_sum");
  has(t, "\nlagscope_frames_total 100\n");
  has(t, "\nlagscope_fps 59.500\n");
  has(t, "\nlagscope_cpu_usage_ratio 1.500000\n");
  has(t, "\nlagscope_resident_memory_bytes 123456789012\n"); /* exact, not %g */
  has(t, "\nlagscope_threads 7\n");
  lagscope__dealloc(t);
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
    TEST_CASE(formats),
    TEST_CASE(hostile_app_name),
};

int main(int argc, char **argv) { return run_test_case(argc, argv, cases, CASE_COUNT(cases)); }
