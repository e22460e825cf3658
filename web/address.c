/*
 * Which address the viewer's URL names when every interface is bound (web.h, "addresses").
 * The first non-loopback IPv4 interface is often the wrong one: on an iPhone with cellular data
 * it is pdp_ip0, on a Linux machine a container bridge or VPN. So: the preferred interface's
 * address (Apple: en0, Wi-Fi on an iPhone, the first Ethernet or Wi-Fi on a Mac; Linux: the
 * interface of the default route), else the first one up; /api/v1/status lists them all.
 * Bound to one address, the viewer is reached at that one only, and the status says so.
 */
#define _GNU_SOURCE /* IFF_UP, IFF_LOOPBACK in net/if.h */
#include "web.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

int lagscope__web_lan_addresses(lagscope__web_lan_address *out, int max) {
  struct ifaddrs *list;
  if (getifaddrs(&list) != 0) return 0;
  int n = 0;
  for (struct ifaddrs *i = list; i != NULL && n < max; i = i->ifa_next) {
    if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET) continue;
    if (!(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK)) continue;
    snprintf(out[n].interface, sizeof(out[n].interface), "%s", i->ifa_name);
    inet_ntop(AF_INET, &((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr, out[n].address,
              (socklen_t)sizeof(out[n].address));
    n++;
  }
  freeifaddrs(list);
  return n;
}

int lagscope__web_reachable_addresses(const char *bind, lagscope__web_lan_address *out, int max) {
  if (strcmp(bind, "0.0.0.0") == 0) return lagscope__web_lan_addresses(out, max);
  if (max < 1) return 0;
  struct in_addr want;
  if (inet_pton(AF_INET, bind, &want) != 1) return 0;
  snprintf(out[0].interface, sizeof(out[0].interface), "%s", "");
  snprintf(out[0].address, sizeof(out[0].address), "%s", bind);
  struct ifaddrs *list;
  if (getifaddrs(&list) != 0) return 1;
  for (struct ifaddrs *i = list; i != NULL; i = i->ifa_next) {
    if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET) continue;
    const struct in_addr *have = &((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr;
    if (have->s_addr != want.s_addr) continue;
    snprintf(out[0].interface, sizeof(out[0].interface), "%s", i->ifa_name);
    break;
  }
  freeifaddrs(list);
  return 1;
}

void lagscope__web_lan_address_pick(const char *bind, char *out, size_t size) {
  snprintf(out, size, "%s", bind);
  if (strcmp(bind, "0.0.0.0") != 0) return;
  snprintf(out, size, "127.0.0.1");
  lagscope__web_lan_address all[LAGSCOPE__WEB_LAN_ADDRESSES_MAX];
  int n = lagscope__web_lan_addresses(all, LAGSCOPE__WEB_LAN_ADDRESSES_MAX);
  char preferred[IF_NAMESIZE];
  lagscope__net_preferred_interface(preferred, sizeof(preferred));
  int pick = n > 0 ? 0 : -1;
  for (int i = 0; i < n; i++)
    if (preferred[0] != '\0' && strcmp(all[i].interface, preferred) == 0) {
      pick = i;
      break;
    }
  if (pick >= 0) snprintf(out, size, "%s", all[pick].address);
}
