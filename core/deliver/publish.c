/*
 * Publishing and logging: every module's way out. Events go onto the running instance's bus
 * (the dispatcher delivers them); log lines go through the configured log hook, or to stderr.
 * The lifecycle (core/lifecycle.c) points both at the instance before its threads start and
 * away from it after they are joined.
 */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>

#define LOG_LINE_MAX 512

static _Atomic(lagscope__bus *) target_bus;
static _Atomic(const lagscope_config *) target_config;

void lagscope__publish_to(lagscope__bus *bus, const lagscope_config *config) {
  atomic_store(&target_config, config);
  atomic_store(&target_bus, bus);
}

void lagscope__log_line(const lagscope_config *config, const char *line) {
  if (config != NULL && config->log != NULL)
    config->log(line, config->log_user);
  else
    fprintf(stderr, "lagscope: %s\n", line);
}

void lagscope__log(const char *format, ...) {
  char line[LOG_LINE_MAX];
  va_list args;
  va_start(args, format);
  vsnprintf(line, sizeof(line), format, args);
  va_end(args);
  lagscope__log_line(atomic_load(&target_config), line);
}

int lagscope__publish(const lagscope_event *event) {
  lagscope__bus *bus = atomic_load(&target_bus);
  if (bus == NULL) {
    lagscope_release(event->payload.any);
    return LAGSCOPE_ENOTRUNNING;
  }
  lagscope_event e = *event;
  e.time_ns = lagscope__now_ns();
  return lagscope__bus_publish(bus, &e);
}

void lagscope__publish_error(int code, const char *format, ...) {
  char message[LOG_LINE_MAX];
  va_list args;
  va_start(args, format);
  int len = vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  if (len < 0) return;
  lagscope__log("%s", message);
  char *copy = lagscope__payload_text(message);
  if (copy == NULL) return;
  lagscope_event e = {.type = LAGSCOPE_EVENT_ERROR};
  e.as.error.code = code;
  e.payload.message = copy;
  lagscope__publish(&e);
}
