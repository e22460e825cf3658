/* Hang reports as JSON (stub: filled in by the reports work of issue 4). */
#include "internal.h"

int lagscope__report_json(const lagscope__hang_record *r, lagscope__resolve_fn resolve,
                          void *ctx, char **report_json, char **heaviest_stack_json) {
  (void)r, (void)resolve, (void)ctx;
  if (report_json != NULL) *report_json = NULL;
  if (heaviest_stack_json != NULL) *heaviest_stack_json = NULL;
  return LAGSCOPE_ENOMEM;
}
