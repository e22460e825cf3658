/* Configuration defaults and validation: the table of fields (LAGSCOPE__CONFIG_FIELDS in
 * internal.h) makes each default, each range check and the message that names the bad field;
 * the fields that a row cannot say are checked by hand below it. */
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
  /* Bottom left: at the top left it covered an editor's first menu titles (File, Edit), and
   * top right is where GTK draws its client-side close button (issue 45, item 9). */
  c.hud_corner = LAGSCOPE_HUD_BOTTOM_LEFT;
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
    out[n] = lagscope__name_char(c) && !(n == 0 && c == '.') ? c : '_';
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



/* ---- the table's checks ------------------------------------------------------------------- */

/* A number as a message says it, whatever the field's type. */
typedef struct number_text {
  char text[32];
} number_text;

static number_text u32_text(uint32_t v) {
  number_text t;
  snprintf(t.text, sizeof(t.text), "%u", v);
  return t;
}

static number_text u64_text(uint64_t v) {
  number_text t;
  snprintf(t.text, sizeof(t.text), "%llu", (unsigned long long)v);
  return t;
}

static number_text int_text(int v) {
  number_text t;
  snprintf(t.text, sizeof(t.text), "%d", v);
  return t;
}

static number_text float_text(float v) {
  number_text t;
  snprintf(t.text, sizeof(t.text), "%g", (double)v);
  return t;
}

#define LAGSCOPE_NUMBER_TEXT_(v)                                                              \
  _Generic((v), uint32_t: u32_text, uint64_t: u64_text, int: int_text, float: float_text)(v).text

/* Compared as doubles: exact for every bound in the table, and a NaN is in no range. */
static int in_range(double v, double lo, double hi) { return v >= lo && v <= hi; }

static int is_power_of_two(uint32_t v) { return v != 0 && (v & (v - 1)) == 0; }

/* Whether config->name passes its row's check (the table's column "check"). */
#define LAGSCOPE_OK_RANGE_(name, min, max) in_range(config->name, min, max)
#define LAGSCOPE_OK_POW2_(name, min, max)                                                     \
  (in_range(config->name, min, max) && is_power_of_two(config->name))
#define LAGSCOPE_OK_AT_MOST_(name, min, max) in_range(config->name, min, config->max)
#define LAGSCOPE_OK_BELOW_(name, min, max) in_range(config->name, min, config->max - 1.0)
#define LAGSCOPE_OK_AT_LEAST_(name, min, max) ((double)config->name >= (min))
#define LAGSCOPE_OK_RT_SIGNAL_(name, min, max) ((double)config->name <= (max))
#define LAGSCOPE_OK_ON_OFF_(name, min, max) 1

/* What the row allows, as its message says it: "10..60000 ms". */
#define LAGSCOPE_ALLOWED_RANGE_(out, name, type, min, max)                                    \
  snprintf(out, sizeof(out), "%s..%s", LAGSCOPE_NUMBER_TEXT_((type)(min)),                   \
           LAGSCOPE_NUMBER_TEXT_((type)(max)))
#define LAGSCOPE_ALLOWED_POW2_(out, name, type, min, max)                                     \
  snprintf(out, sizeof(out), "a power of two in %s..%s", LAGSCOPE_NUMBER_TEXT_((type)(min)), \
           LAGSCOPE_NUMBER_TEXT_((type)(max)))
#define LAGSCOPE_ALLOWED_AT_MOST_(out, name, type, min, max)                                  \
  snprintf(out, sizeof(out), "%s..%s (%s)", LAGSCOPE_NUMBER_TEXT_((type)(min)), #max,        \
           LAGSCOPE_NUMBER_TEXT_(config->max))
#define LAGSCOPE_ALLOWED_BELOW_(out, name, type, min, max)                                    \
  snprintf(out, sizeof(out), "%s..%s - 1 (%s)", LAGSCOPE_NUMBER_TEXT_((type)(min)), #max,    \
           LAGSCOPE_NUMBER_TEXT_(config->max - 1))
#define LAGSCOPE_ALLOWED_AT_LEAST_(out, name, type, min, max)                                 \
  snprintf(out, sizeof(out), "at least %s", LAGSCOPE_NUMBER_TEXT_((type)(min)))
#define LAGSCOPE_ALLOWED_RT_SIGNAL_(out, name, type, min, max)                                \
  snprintf(out, sizeof(out), "0 (the first free real-time signal) or a real-time signal's number")
#define LAGSCOPE_ALLOWED_ON_OFF_(out, name, type, min, max) snprintf(out, sizeof(out), "0, 1")

static int refuse(char *why, size_t why_size, const char *field, const char *value,
                  const char *allowed, const char *unit) {
  lagscope__explain(why, why_size, "config.%s = %s is out of range: it must be %s%s%s", field,
                    value, allowed, unit[0] != '\0' ? " " : "", unit);
  return LAGSCOPE_EINVAL;
}

/* One function per row, check_<name>: 0, or LAGSCOPE_EINVAL and why. F */
#define LAGSCOPE_CHECK_FIELD_(name, type, default_value, check, min, max, unit, status)       \
  static int check_##name(const lagscope_config *config, char *why, size_t why_size) {      \
    if (LAGSCOPE_OK_##check##_(name, min, max)) return LAGSCOPE_OK;                         \
    char allowed[128];                                                                       \
    LAGSCOPE_ALLOWED_##check##_(allowed, name, type, min, max);                              \
    return refuse(why, why_size, #name, LAGSCOPE_NUMBER_TEXT_(config->name), allowed, unit); \
  }
LAGSCOPE__CONFIG_FIELDS(LAGSCOPE_CHECK_FIELD_)
#undef LAGSCOPE_CHECK_FIELD_

/* The table's rows, in its order: the first bad field is the one named. F */
static int check_fields(const lagscope_config *config, char *why, size_t why_size) {
#define LAGSCOPE_CALL_CHECK_(name, ...)                                                       \
  if (check_##name(config, why, why_size) != LAGSCOPE_OK) return LAGSCOPE_EINVAL;
  LAGSCOPE__CONFIG_FIELDS(LAGSCOPE_CALL_CHECK_)
#undef LAGSCOPE_CALL_CHECK_
  return LAGSCOPE_OK;
}

/* ---- the fields checked by hand (internal.h says why) ---------------------------------------- */

static int check_hud_corner(const lagscope_config *config, char *why, size_t why_size) {
  if ((unsigned)config->hud_corner <= LAGSCOPE_HUD_BOTTOM_RIGHT) return LAGSCOPE_OK;
  lagscope__explain(why, why_size, "config.hud_corner = %d is out of range: it must be one of "
                    "LAGSCOPE_HUD_TOP_LEFT..LAGSCOPE_HUD_BOTTOM_RIGHT (0..3)",
                    (int)config->hud_corner);
  return LAGSCOPE_EINVAL;
}

static int check_server_bind(const lagscope_config *config, char *why, size_t why_size) {
  struct in_addr address;
  if (config->server_bind == NULL || inet_pton(AF_INET, config->server_bind, &address) == 1)
    return LAGSCOPE_OK;
  lagscope__explain(why, why_size, "config.server_bind = \"%.64s\" is not an IPv4 address: "
                    "use \"0.0.0.0\" (every interface), \"127.0.0.1\" (this machine only) "
                    "or one of this machine's addresses", config->server_bind);
  return LAGSCOPE_EINVAL;
}

static int check_post_main(const lagscope_config *config, char *why, size_t why_size) {
  if (config->post_main != NULL || config->post_main_user == NULL) return LAGSCOPE_OK;
  lagscope__explain(why, why_size,
                    "config.post_main_user is set but config.post_main is NULL: set both, or "
                    "neither for heartbeat mode");
  return LAGSCOPE_EINVAL;
}

static int check_metrics_token(const lagscope_config *config, char *why, size_t why_size) {
  const char *problem;
  if (config->metrics_token == NULL ||
      lagscope__credential_problem(config->metrics_token, &problem) == LAGSCOPE_OK)
    return LAGSCOPE_OK;
  lagscope__explain(why, why_size, "config.metrics_token %s: it must be 16..128 visible ASCII "
                    "characters without spaces (its value is not shown)", problem);
  return LAGSCOPE_EINVAL;
}

static int check_pushgateway_url(const lagscope_config *config, char *why, size_t why_size) {
  lagscope__http_url url;
  const char *problem =
      config->pushgateway_url == NULL ? NULL : lagscope__http_url_parse(config->pushgateway_url, &url);
  if (problem == NULL) return LAGSCOPE_OK;
  lagscope__explain(why, why_size, "config.pushgateway_url = \"%.128s\" is not a Pushgateway's "
                    "address (http://HOST[:PORT][/PATH]): %s", config->pushgateway_url, problem);
  return LAGSCOPE_EINVAL;
}

int lagscope_config_validate(const lagscope_config *config, char *why, size_t why_size) {
  if (config == NULL) {
    lagscope__explain(why, why_size, "config is NULL");
    return LAGSCOPE_EINVAL;
  }
  if (check_fields(config, why, why_size) != LAGSCOPE_OK ||
      check_hud_corner(config, why, why_size) != LAGSCOPE_OK ||
      check_server_bind(config, why, why_size) != LAGSCOPE_OK ||
      check_post_main(config, why, why_size) != LAGSCOPE_OK ||
      check_metrics_token(config, why, why_size) != LAGSCOPE_OK ||
      check_pushgateway_url(config, why, why_size) != LAGSCOPE_OK)
    return LAGSCOPE_EINVAL;
  lagscope__explain(why, why_size, "%s", "");
  return LAGSCOPE_OK;
}
