/* Config validation: the defaults pass; each bad field is refused with a message naming it,
 * and lagscope_start with it starts nothing. The table's widest bounds, which lagscope-run and
 * the preload check their text against, are its rows'. */
/* check-test-viewers: every lagscope_start here is refused by validation, before any viewer. */
#include "check.h"
#include "internal.h" /* lagscope__config_bounds_of */

#include <float.h>
#include <string.h>

static char logged[512];
static void capture_log(const char *line, void *user) {
  (void)user;
  snprintf(logged, sizeof(logged), "%s", line);
}

static void refused(lagscope_config c, const char *field) {
  char why[256];
  CHECK_EQ_INT(lagscope_config_validate(&c, why, sizeof(why)), LAGSCOPE_EINVAL);
  if (strstr(why, field) == NULL) {
    fprintf(stderr, "message does not name %s: %s\n", field, why);
    CHECK(0);
  }
  c.log = capture_log;
  logged[0] = '\0';
  CHECK_EQ_INT(lagscope_start(&c), LAGSCOPE_EINVAL);
  CHECK(strstr(logged, field) != NULL);
  CHECK(!lagscope_is_running());
  CHECK_EQ_INT(lagscope_stop(), LAGSCOPE_ENOTRUNNING);
}

static int post_nothing(lagscope_main_fn fn, void *arg, void *user) {
  (void)fn, (void)arg, (void)user;
  return 0;
}

int main(void) {
  lagscope_config ok = lagscope_config_default();
  char why[256];
  CHECK_EQ_INT(lagscope_config_validate(&ok, why, sizeof(why)), LAGSCOPE_OK);
  CHECK_EQ_INT(ok.hang_threshold_ms, 250);
  CHECK_EQ_INT(ok.usage_interval_ms, 500);
  CHECK_EQ_INT(ok.refresh_hz, 60);
  CHECK_EQ_INT(lagscope_config_validate(NULL, why, sizeof(why)), LAGSCOPE_EINVAL);

  lagscope_config c;
  c = ok, c.hang_threshold_ms = 9, refused(c, "hang_threshold_ms");
  c = ok, c.hang_threshold_ms = 60001, refused(c, "hang_threshold_ms");
  c = ok, c.ping_interval_ms = 0, refused(c, "ping_interval_ms");
  c = ok, c.ping_interval_ms = 251, refused(c, "ping_interval_ms");
  c = ok, c.usage_interval_ms = 49, refused(c, "usage_interval_ms");
  c = ok, c.usage_interval_ms = 60001, refused(c, "usage_interval_ms");
  /* The field's name before the rename (a "sample" is a stack's) is the same field. */
  lagscope_config old = ok;
  old.sample_interval_ms = 123;
  CHECK_EQ_INT(old.usage_interval_ms, 123);
  lagscope_config designated = {.sample_interval_ms = 250};
  CHECK_EQ_INT(designated.usage_interval_ms, 250);
  c = ok, c.hang_sample_interval_ms = 0, refused(c, "hang_sample_interval_ms");
  c = ok, c.hang_sample_interval_ms = 1001, refused(c, "hang_sample_interval_ms");
  c = ok, c.stack_copy_kib = 15, refused(c, "stack_copy_kib");
  c = ok, c.stack_copy_kib = 1025, refused(c, "stack_copy_kib");
  CHECK_EQ_INT((int)lagscope_config_default().stack_copy_kib, 64);
  c = ok, c.report_max_count = 0, refused(c, "report_max_count");
  c = ok, c.report_max_bytes = 1000, refused(c, "report_max_bytes");
  c = ok, c.hud_scale = 0.4f, refused(c, "hud_scale");
  c = ok, c.hud_scale = 9.0f, refused(c, "hud_scale");
  c = ok, c.hud_corner = (lagscope_hud_corner)7, refused(c, "hud_corner");
  c = ok, c.refresh_hz = 0, refused(c, "refresh_hz");
  c = ok, c.refresh_hz = 1001, refused(c, "refresh_hz");
  c = ok, c.bus_capacity = 1000, refused(c, "bus_capacity");
  c = ok, c.bus_capacity = 8, refused(c, "bus_capacity");
  c = ok, c.bus_capacity = 131072, refused(c, "bus_capacity");
  c = ok, c.subscriber_capacity = 100, refused(c, "subscriber_capacity");
  c = ok, c.subscriber_capacity = 0, refused(c, "subscriber_capacity");
  c = ok, c.hitch_report_ms = 60001, refused(c, "hitch_report_ms");
  c = ok, c.hitch_keep = 0, refused(c, "hitch_keep");
  c = ok, c.hitch_keep = 1025, refused(c, "hitch_keep");
  c = ok, c.hang_count_idle = 2, refused(c, "hang_count_idle");
  c = ok, c.capture_signal = 65, refused(c, "capture_signal");
  c = ok, c.server_port = 65536, refused(c, "server_port");
  c = ok, c.server_max_clients = 1, refused(c, "server_max_clients");
  c = ok, c.server_max_stream_clients = 0, refused(c, "server_max_stream_clients");
  c = ok, c.server_max_stream_clients = 16, refused(c, "server_max_stream_clients");
  c = ok, c.server_bind = "not an address", refused(c, "server_bind");
  c = ok, c.metrics_token = "short-secret", refused(c, "metrics_token");
  c = ok, c.metrics_token = "a secret of a space", refused(c, "metrics_token");
  /* The push's gateway: http only, said at the check (web/push.c speaks no TLS). */
  c = ok, c.pushgateway_url = "https://gateway:9091", refused(c, "pushgateway_url");
  c = ok, c.pushgateway_url = "gateway:9091", refused(c, "pushgateway_url");
  c = ok, c.pushgateway_url = "http://gateway:99999", refused(c, "pushgateway_url");
  c = ok, c.pushgateway_url = "http://gateway:9091/?x=1", refused(c, "pushgateway_url");
  c = ok, c.pushgateway_url = "http://user@gateway:9091", refused(c, "pushgateway_url");
  c = ok, c.pushgateway_url = "http://", refused(c, "pushgateway_url");
  c = ok, c.pushgateway_url = "https://gateway";
  CHECK_EQ_INT(lagscope_config_validate(&c, why, sizeof(why)), LAGSCOPE_EINVAL);
  CHECK(strstr(why, "https is not supported") != NULL);
  c = ok, c.pushgateway_url = "http://gateway.example:9091/prefix/";
  CHECK_EQ_INT(lagscope_config_validate(&c, why, sizeof(why)), LAGSCOPE_OK);
  lagscope__http_url url;
  CHECK(lagscope__http_url_parse("HTTP://10.0.0.7/a/b//", &url) == NULL);
  CHECK(strcmp(url.host, "10.0.0.7") == 0 && url.port == 80 && strcmp(url.path, "/a/b") == 0);
  CHECK(lagscope__http_url_parse("http://gw:9091", &url) == NULL);
  CHECK(strcmp(url.host, "gw") == 0 && url.port == 9091 && url.path[0] == '\0');
  int token;
  c = ok, c.post_main_user = &token, refused(c, "post_main");

  /* The message says what is allowed, from the table's row. */
  c = ok, c.ping_interval_ms = 251;
  CHECK_EQ_INT(lagscope_config_validate(&c, why, sizeof(why)), LAGSCOPE_EINVAL);
  CHECK(strstr(why, "1..hang_threshold_ms (250) ms") != NULL);
  c = ok, c.bus_capacity = 1000;
  CHECK_EQ_INT(lagscope_config_validate(&c, why, sizeof(why)), LAGSCOPE_EINVAL);
  CHECK(strstr(why, "a power of two in 16..65536") != NULL);

  /* The credential's message says what is wrong, never the credential. */
  c = ok, c.metrics_token = "0123456789abcde";
  CHECK_EQ_INT(lagscope_config_validate(&c, why, sizeof(why)), LAGSCOPE_EINVAL);
  CHECK(strstr(why, "shorter than 16") != NULL && strstr(why, "0123456789abcde") == NULL);
  c = ok, c.metrics_token = "0123456789abcdef";
  CHECK_EQ_INT(lagscope_config_validate(&c, why, sizeof(why)), LAGSCOPE_OK);

  /* Edges that are allowed. */
  c = ok, c.hang_threshold_ms = 10, c.ping_interval_ms = 10; /* hitch_report_ms 50: none */
  CHECK_EQ_INT(lagscope_config_validate(&c, why, sizeof(why)), LAGSCOPE_OK);
  c = ok, c.post_main = post_nothing, c.refresh_hz = 120, c.bus_capacity = 16;
  CHECK_EQ_INT(lagscope_config_validate(&c, why, sizeof(why)), LAGSCOPE_OK);
  c = ok, c.server_max_clients = 2, c.server_max_stream_clients = 1, c.hitch_report_ms = 0;
  CHECK_EQ_INT(lagscope_config_validate(&c, why, sizeof(why)), LAGSCOPE_OK);
  c = ok, c.report_max_bytes = 64u * 1024u, c.server_port = 0, c.hud_scale = 8.0f;
  CHECK_EQ_INT(lagscope_config_validate(&c, why, sizeof(why)), LAGSCOPE_OK);

  /* Each row's widest bounds: its own, or the named field's (AT_MOST, BELOW); every default
   * within them. */
  lagscope__config_bounds b = lagscope__config_bounds_of(LAGSCOPE__FIELD_hang_threshold_ms);
  CHECK(b.min == 10 && b.max == 60000);
  b = lagscope__config_bounds_of(LAGSCOPE__FIELD_ping_interval_ms);
  CHECK(b.min == 1 && b.max == 60000);
  b = lagscope__config_bounds_of(LAGSCOPE__FIELD_server_max_stream_clients);
  CHECK(b.min == 1 && b.max == 255);
  b = lagscope__config_bounds_of(LAGSCOPE__FIELD_report_max_bytes);
  CHECK(b.min == 65536 && b.max == DBL_MAX);
  b = lagscope__config_bounds_of(LAGSCOPE__FIELD_server_port);
  CHECK(b.min == 0 && b.max == 65535);
  b = lagscope__config_bounds_of(LAGSCOPE__FIELD_hud_scale);
  CHECK(b.min == 0.5 && b.max == 8.0);
#define DEFAULT_WITHIN_(name, ...)                                                        \
  b = lagscope__config_bounds_of(LAGSCOPE__FIELD_##name);                                 \
  CHECK_MSG(b.min <= (double)ok.name && (double)ok.name <= b.max, "%s's default", #name);
  LAGSCOPE__CONFIG_FIELDS(DEFAULT_WITHIN_)
#undef DEFAULT_WITHIN_

  /* The error list makes both names and sentences. */
  CHECK(strcmp(lagscope_error_name(LAGSCOPE_EINVAL), "EINVAL") == 0);
  CHECK(strcmp(lagscope_strerror(LAGSCOPE_OK), "success") == 0);
  CHECK(strcmp(lagscope_strerror(12345), "unknown error") == 0);
  CHECK(strstr(lagscope_strerror(LAGSCOPE_DISABLED), "release") != NULL);
  CHECK_EQ_INT(lagscope_version(), LAGSCOPE_VERSION_HEX);
  printf("config: ok\n");
  return 0;
}
