/* Configuration defaults and validation: one table of ranges serves both the check and the
 * message that names the bad field. */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>

/* Each row's type is the struct's: a row that drifts from lagscope.h does not compile. */
#define LAGSCOPE_TYPE_MATCHES_(name, type, ...)                                               \
  _Static_assert(_Generic(((lagscope_config *)0)->name, type: 1, default: 0),               \
                 "LAGSCOPE__CONFIG_FIELDS: lagscope_config." #name " is not a " #type);
LAGSCOPE__CONFIG_FIELDS(LAGSCOPE_TYPE_MATCHES_)
#undef LAGSCOPE_TYPE_MATCHES_

lagscope_config lagscope_config_default(void) {
  lagscope_config c = {0}; /* the hooks, strings and user pointers: NULL */
#define LAGSCOPE_SET_DEFAULT_(name, type, default_value, ...) c.name = default_value;
  LAGSCOPE__CONFIG_FIELDS(LAGSCOPE_SET_DEFAULT_)
#undef LAGSCOPE_SET_DEFAULT_
  c.hud_corner = LAGSCOPE_HUD_TOP_LEFT;
  return c;
}

/* The process's name, made safe as a folder's: letters, digits, '-', '_' and '.' (not first);
 * any other character becomes '_'; "app" when there is none. */
static void process_folder_name(char *out, size_t size) {
  char raw[256];
  lagscope__process_raw_name(raw, sizeof(raw));
  size_t n = 0;
  for (size_t i = 0; raw[i] != '\0' && n + 1 < size; i++) {
    char c = raw[i];
    int safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '-' || c == '_' || c == '.';
    out[n] = safe && !(n == 0 && c == '.') ? c : '_';
    n++;
  }
  if (n == 0 && size > 4) n = (size_t)snprintf(out, size, "app");
  if (size > 0) out[n < size ? n : size - 1] = '\0';
}

void lagscope__app_name(const lagscope_config *config, char *out, size_t size) {
  if (config->app_name != NULL)
    snprintf(out, size, "%s", config->app_name);
  else
    process_folder_name(out, size);
}

void lagscope__report_dir(const lagscope_config *config, const char *app_name, char *out,
                          size_t size) {
  if (config->report_dir != NULL) {
    snprintf(out, size, "%s", config->report_dir);
    return;
  }
  char root[400];
  lagscope__state_root(root, sizeof(root));
  if (root[0] != '\0') {
    snprintf(out, size, "%s/%s", root, app_name);
    return;
  }
  const char *tmp = getenv("TMPDIR");
  snprintf(out, size, "%s/lagscope-%ld/%s", tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp",
           (long)lagscope__user_id(), app_name);
}



static int is_power_of_two(uint32_t v) { return v != 0 && (v & (v - 1)) == 0; }

static int reject(char *why, size_t why_size, const char *field, uint32_t value,
                  const char *allowed) {
  lagscope__explain(why, why_size, "config.%s = %u is out of range: it must be %s", field,
                    value, allowed);
  return LAGSCOPE_EINVAL;
}

#define LAGSCOPE_CHECK_RANGE_(field, lo, hi, allowed)                                       \
  do {                                                                                       \
    if (config->field < (lo) || config->field > (hi))                                        \
      return reject(why, why_size, #field, config->field, allowed);                          \
  } while (0)

static int check_server(const lagscope_config *config, char *why, size_t why_size) {
  if (config->server_port > 65535)
    return reject(why, why_size, "server_port", config->server_port, "0..65535 (0: any free port)");
  LAGSCOPE_CHECK_RANGE_(server_max_clients, 2, 256, "2..256");
  LAGSCOPE_CHECK_RANGE_(server_max_stream_clients, 1, config->server_max_clients - 1,
                        "1..server_max_clients - 1");
  struct in_addr address;
  if (config->server_bind != NULL && inet_pton(AF_INET, config->server_bind, &address) != 1) {
    lagscope__explain(why, why_size, "config.server_bind = \"%.64s\" is not an IPv4 address: "
                      "use \"0.0.0.0\" (every interface), \"127.0.0.1\" (this machine only) "
                      "or one of this machine's addresses", config->server_bind);
    return LAGSCOPE_EINVAL;
  }
  return LAGSCOPE_OK;
}

int lagscope_config_validate(const lagscope_config *config, char *why, size_t why_size) {
  if (config == NULL) {
    lagscope__explain(why, why_size, "config is NULL");
    return LAGSCOPE_EINVAL;
  }
  LAGSCOPE_CHECK_RANGE_(hang_threshold_ms, 10, 60000, "10..60000 ms");
  LAGSCOPE_CHECK_RANGE_(ping_interval_ms, 1, config->hang_threshold_ms,
                        "1..hang_threshold_ms ms");
  LAGSCOPE_CHECK_RANGE_(sample_interval_ms, 50, 60000, "50..60000 ms");
  LAGSCOPE_CHECK_RANGE_(hang_sample_interval_ms, 1, 1000, "1..1000 ms");
  if (config->hitch_report_ms > 60000) /* 0 is off; at or past the threshold, no stall is one */
    return reject(why, why_size, "hitch_report_ms", config->hitch_report_ms,
                  "0 (off) ..60000 ms");
  LAGSCOPE_CHECK_RANGE_(hitch_keep, 1, 1024, "1..1024");
  LAGSCOPE_CHECK_RANGE_(hang_count_idle, 0, 1, "0, 1");
  if (config->capture_signal > 64)
    return reject(why, why_size, "capture_signal", config->capture_signal,
                  "0 (the first free real-time signal) or a real-time signal's number");
  LAGSCOPE_CHECK_RANGE_(stack_copy_kib, 16, 1024, "16..1024 KiB");
  LAGSCOPE_CHECK_RANGE_(refresh_hz, 1, 1000, "1..1000 Hz");
  LAGSCOPE_CHECK_RANGE_(report_max_count, 1, 100000, "1..100000");
  if (config->report_max_bytes < 64u * 1024u) {
    lagscope__explain(why, why_size,
                      "config.report_max_bytes = %llu is out of range: it must be at least 65536",
                      (unsigned long long)config->report_max_bytes);
    return LAGSCOPE_EINVAL;
  }
  LAGSCOPE_CHECK_RANGE_(bus_capacity, 16, 65536, "a power of two in 16..65536");
  if (!is_power_of_two(config->bus_capacity))
    return reject(why, why_size, "bus_capacity", config->bus_capacity,
                  "a power of two in 16..65536");
  LAGSCOPE_CHECK_RANGE_(subscriber_capacity, 16, 65536, "a power of two in 16..65536");
  if (!is_power_of_two(config->subscriber_capacity))
    return reject(why, why_size, "subscriber_capacity", config->subscriber_capacity,
                  "a power of two in 16..65536");
  if (!(config->hud_scale >= 0.5f && config->hud_scale <= 8.0f)) { /* NaN fails too */
    lagscope__explain(why, why_size,
                      "config.hud_scale = %g is out of range: it must be 0.5..8 pixels per point",
                      (double)config->hud_scale);
    return LAGSCOPE_EINVAL;
  }
  if ((unsigned)config->hud_corner > LAGSCOPE_HUD_BOTTOM_RIGHT) {
    lagscope__explain(why, why_size, "config.hud_corner = %d is out of range: it must be one of "
               "LAGSCOPE_HUD_TOP_LEFT..LAGSCOPE_HUD_BOTTOM_RIGHT (0..3)", (int)config->hud_corner);
    return LAGSCOPE_EINVAL;
  }
  if (check_server(config, why, why_size) != LAGSCOPE_OK) return LAGSCOPE_EINVAL;
  if (config->post_main == NULL && config->post_main_user != NULL) {
    lagscope__explain(why, why_size,
               "config.post_main_user is set but config.post_main is NULL: set both, or "
               "neither for heartbeat mode");
    return LAGSCOPE_EINVAL;
  }
  lagscope__explain(why, why_size, "%s", "");
  return LAGSCOPE_OK;
}
