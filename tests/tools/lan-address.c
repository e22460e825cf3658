/* lan-address — what the viewer's URL names with every interface bound, then every address the
 * status API lists, one "interface address" a line: for tests/unit/web/check-lan-address. */
#include "web.h"

#include <stdio.h>

int main(void) {
  char picked[64];
  lagscope__web_lan_address_pick("0.0.0.0", picked, sizeof(picked));
  printf("%s\n", picked);
  lagscope__web_lan_address all[LAGSCOPE__WEB_LAN_ADDRESSES_MAX];
  int n = lagscope__web_lan_addresses(all, LAGSCOPE__WEB_LAN_ADDRESSES_MAX);
  for (int i = 0; i < n; i++) printf("%s %s\n", all[i].interface, all[i].address);
  return 0;
}
