/* The preload's Vulkan layer (see vk_layer.h): the loader's chain followed through
 * vkCreateInstance and vkCreateDevice, and vkQueuePresentKHR seen: each present on the watched
 * thread is a frame of the Vulkan loop (hooks.c's frame path, as a GL swap is), which answers
 * the waiting ping, and the HUD is drawn over the presented image first (vk_hud.c). The
 * watched thread is the main thread, or, when the main thread shows no loop, the thread that
 * presents (lagscope__preload_presenter_watched): a render thread's hang is then found.
 *
 * The instances and devices are kept in small fixed tables keyed by the loader's dispatch
 * table (a device's queues share its key). They change under the layer's own lock, in the
 * program's create and destroy calls; a present reads them without it. */
#define _GNU_SOURCE
#include "vk_layer.h"

#include "internal.h" /* lagscope__log */
#include "preload.h"
#include "x11_overlay.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#define MAX_INSTANCES 16
#define MAX_DEVICES 32

typedef struct vk_instance {
  VkInstance handle;
  PFN_vkGetInstanceProcAddr next_proc;
  PFN_vkDestroyInstance destroy;
} vk_instance;

static pthread_mutex_t tables = PTHREAD_MUTEX_INITIALIZER;

/* ---- a table keyed by the loader's dispatch table ------------------------------------------
 * The instances' and the devices' alike: a slot is found free under `tables`, its entry
 * filled, then its key published (release), so that a reader without the lock that finds the
 * key (acquire) finds the entry whole; destroy clears the key under the lock. */
typedef struct keyed_table {
  _Atomic(void *) *keys;
  int size;
} keyed_table;

/* handle's slot, or -1. Any thread, no lock. F */
static int slot_of(const keyed_table *t, const void *handle) {
  void *key = lagscope__vk_key(handle);
  for (int i = 0; i < t->size; i++)
    if (atomic_load_explicit(&t->keys[i], memory_order_acquire) == key) return i;
  return -1;
}

/* A free slot, or -1 (the table is full: that object gets no dispatch from the layer). Under
 * `tables`. F */
static int free_slot(const keyed_table *t) {
  for (int i = 0; i < t->size; i++)
    if (atomic_load(&t->keys[i]) == NULL) return i;
  return -1;
}

/* Slot i's entry is filled: its key published, or cleared (NULL). Under `tables`. F */
static void set_key(keyed_table *t, int i, void *key) {
  atomic_store_explicit(&t->keys[i], key, memory_order_release);
}

/* The slots in use; *last the last of them. F */
static int slots_used(const keyed_table *t, int *last) {
  int count = 0;
  for (int i = 0; i < t->size; i++)
    if (atomic_load(&t->keys[i]) != NULL) *last = i, count++;
  return count;
}

static vk_instance instances[MAX_INSTANCES];
static _Atomic(void *) instance_keys[MAX_INSTANCES];
static keyed_table instance_table = {instance_keys, MAX_INSTANCES};
static lagscope__vk_device devices[MAX_DEVICES];
static _Atomic(void *) device_keys[MAX_DEVICES];
static keyed_table device_table = {device_keys, MAX_DEVICES};

static vk_instance *instance_of(const void *handle) {
  int i = slot_of(&instance_table, handle);
  return i >= 0 ? &instances[i] : NULL;
}

/* A physical device shares its instance's key; failing that, the one instance there is. */
static vk_instance *instance_of_physical(VkPhysicalDevice physical) {
  vk_instance *found = instance_of(physical);
  int last = -1;
  if (found == NULL && slots_used(&instance_table, &last) == 1) found = &instances[last];
  return found;
}

static lagscope__vk_device *device_of(const void *handle) {
  int i = slot_of(&device_table, handle);
  return i >= 0 ? &devices[i] : NULL;
}

uint32_t lagscope__vk_queue_family(const lagscope__vk_device *d, VkQueue queue) {
  for (int i = 0; i < LAGSCOPE__VK_MAX_QUEUES; i++)
    if (d->queues[i].queue == queue) return d->queues[i].family;
  return UINT32_MAX;
}

/* The chain's link for this layer in a create info's pNext (type: the loader's sType). */
static void *chain_info(const void *next, VkStructureType type, VkLayerFunction function) {
  for (const VkBaseInStructure *s = next; s != NULL; s = s->pNext) {
    /* VkLayerInstanceCreateInfo and VkLayerDeviceCreateInfo begin alike. */
    const VkLayerInstanceCreateInfo *info = (const VkLayerInstanceCreateInfo *)s;
    if (s->sType == type && info->function == function) return (void *)s;
  }
  return NULL;
}

/* ---- instances ----------------------------------------------------------------------------- */

static VKAPI_ATTR VkResult VKAPI_CALL create_instance(const VkInstanceCreateInfo *info,
                                                      const VkAllocationCallbacks *allocator,
                                                      VkInstance *out) {
  VkLayerInstanceCreateInfo *link = chain_info(
      info->pNext, VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO, VK_LAYER_LINK_INFO);
  if (link == NULL || link->u.pLayerInfo == NULL) return VK_ERROR_INITIALIZATION_FAILED;
  PFN_vkGetInstanceProcAddr next_proc = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
  link->u.pLayerInfo = link->u.pLayerInfo->pNext; /* the next layer finds its own link */
  PFN_vkCreateInstance create = (PFN_vkCreateInstance)next_proc(NULL, "vkCreateInstance");
  if (create == NULL) return VK_ERROR_INITIALIZATION_FAILED;
  VkResult rc = create(info, allocator, out);
  if (rc != VK_SUCCESS) return rc;
  pthread_mutex_lock(&tables);
  int i = free_slot(&instance_table);
  if (i >= 0) {
    instances[i].handle = *out;
    instances[i].next_proc = next_proc;
    instances[i].destroy = (PFN_vkDestroyInstance)next_proc(*out, "vkDestroyInstance");
    set_key(&instance_table, i, lagscope__vk_key(*out));
  }
  pthread_mutex_unlock(&tables);
  return VK_SUCCESS;
}

static VKAPI_ATTR void VKAPI_CALL destroy_instance(VkInstance instance,
                                                   const VkAllocationCallbacks *allocator) {
  vk_instance *found = instance != VK_NULL_HANDLE ? instance_of(instance) : NULL;
  if (found == NULL) return;
  PFN_vkDestroyInstance destroy = found->destroy;
  pthread_mutex_lock(&tables);
  set_key(&instance_table, (int)(found - instances), NULL);
  pthread_mutex_unlock(&tables);
  if (destroy != NULL) destroy(instance, allocator);
}

/* ---- devices ------------------------------------------------------------------------------- */

static void load_device(lagscope__vk_device *d, vk_instance *instance) {
#define LAGSCOPE__VK_LOAD(name) d->name = (PFN_vk##name)d->next_proc(d->handle, "vk" #name);
  LAGSCOPE__VK_DEVICE_FUNCTIONS(LAGSCOPE__VK_LOAD)
#undef LAGSCOPE__VK_LOAD
  if (instance == NULL) return;
  d->surface_capabilities = (PFN_vkGetPhysicalDeviceSurfaceCapabilitiesKHR)instance->next_proc(
      instance->handle, "vkGetPhysicalDeviceSurfaceCapabilitiesKHR");
  d->memory_properties = (PFN_vkGetPhysicalDeviceMemoryProperties)instance->next_proc(
      instance->handle, "vkGetPhysicalDeviceMemoryProperties");
}

/* Which of the extensions that tell a frame's real presentation time physical has. */
static void note_timing(vk_instance *instance, VkPhysicalDevice physical, lagscope__vk_device *d) {
  PFN_vkEnumerateDeviceExtensionProperties list =
      instance == NULL ? NULL
                       : (PFN_vkEnumerateDeviceExtensionProperties)instance->next_proc(
                             instance->handle, "vkEnumerateDeviceExtensionProperties");
  VkExtensionProperties all[256];
  uint32_t n = 256;
  if (list == NULL || (list(physical, NULL, &n, all) != VK_SUCCESS && n == 0)) return;
  for (uint32_t i = 0; i < n; i++) {
    if (strcmp(all[i].extensionName, VK_KHR_PRESENT_WAIT_EXTENSION_NAME) == 0) d->has_present_wait = 1;
    if (strcmp(all[i].extensionName, VK_GOOGLE_DISPLAY_TIMING_EXTENSION_NAME) == 0)
      d->has_display_timing = 1;
  }
}

/* Says once where the Vulkan frames' times come from: the present's call, and whether the
 * driver could tell more. */
static void say_timing_source(const lagscope__vk_device *d) {
  static atomic_int said;
  if (atomic_exchange(&said, 1)) return;
  const char *has = d->has_present_wait && d->has_display_timing
                        ? "has VK_KHR_present_wait and VK_GOOGLE_display_timing, not read yet"
                    : d->has_present_wait   ? "has VK_KHR_present_wait, not read yet"
                    : d->has_display_timing ? "has VK_GOOGLE_display_timing, not read yet"
                                            : "has neither VK_KHR_present_wait nor "
                                              "VK_GOOGLE_display_timing";
  lagscope__log("Vulkan frames are timed at each vkQueuePresentKHR call, not when shown (the "
                "driver %s)",
                has);
}

static VKAPI_ATTR VkResult VKAPI_CALL create_device(VkPhysicalDevice physical,
                                                    const VkDeviceCreateInfo *info,
                                                    const VkAllocationCallbacks *allocator,
                                                    VkDevice *out) {
  VkLayerDeviceCreateInfo *link =
      chain_info(info->pNext, VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO, VK_LAYER_LINK_INFO);
  VkLayerDeviceCreateInfo *loader_data = chain_info(
      info->pNext, VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO, VK_LOADER_DATA_CALLBACK);
  if (link == NULL || link->u.pLayerInfo == NULL) return VK_ERROR_INITIALIZATION_FAILED;
  PFN_vkGetInstanceProcAddr next_instance_proc = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
  PFN_vkGetDeviceProcAddr next_proc = link->u.pLayerInfo->pfnNextGetDeviceProcAddr;
  link->u.pLayerInfo = link->u.pLayerInfo->pNext;
  vk_instance *instance = instance_of_physical(physical);
  PFN_vkCreateDevice create = (PFN_vkCreateDevice)next_instance_proc(
      instance != NULL ? instance->handle : VK_NULL_HANDLE, "vkCreateDevice");
  if (create == NULL) return VK_ERROR_INITIALIZATION_FAILED;
  VkResult rc = create(physical, info, allocator, out);
  if (rc != VK_SUCCESS) return rc;
  pthread_mutex_lock(&tables);
  int i = free_slot(&device_table);
  if (i >= 0) {
    lagscope__vk_device *d = &devices[i];
    memset(d, 0, sizeof(*d));
    d->handle = *out;
    d->physical = physical;
    d->next_proc = next_proc;
    d->set_loader_data = loader_data != NULL ? loader_data->u.pfnSetDeviceLoaderData : NULL;
    load_device(d, instance);
    note_timing(instance, physical, d);
    d->key = lagscope__vk_key(*out);
    set_key(&device_table, i, d->key);
  }
  pthread_mutex_unlock(&tables);
  return VK_SUCCESS;
}

static VKAPI_ATTR void VKAPI_CALL destroy_device(VkDevice device,
                                                 const VkAllocationCallbacks *allocator) {
  lagscope__vk_device *d = device != VK_NULL_HANDLE ? device_of(device) : NULL;
  if (d == NULL) return;
  PFN_vkDestroyDevice destroy = d->DestroyDevice;
  pthread_mutex_lock(&tables);
  lagscope__vk_hud_device_gone(d);
  set_key(&device_table, (int)(d - devices), NULL);
  pthread_mutex_unlock(&tables);
  if (destroy != NULL) destroy(device, allocator);
}

/* The queue's family kept: the HUD's draw is recorded on a pool of that family. */
static void note_queue(lagscope__vk_device *d, VkQueue queue, uint32_t family) {
  if (queue == VK_NULL_HANDLE) return;
  pthread_mutex_lock(&tables);
  for (int i = 0; i < LAGSCOPE__VK_MAX_QUEUES; i++) {
    if (d->queues[i].queue != VK_NULL_HANDLE && d->queues[i].queue != queue) continue;
    d->queues[i].queue = queue;
    d->queues[i].family = family;
    break;
  }
  pthread_mutex_unlock(&tables);
}

static VKAPI_ATTR void VKAPI_CALL get_device_queue(VkDevice device, uint32_t family,
                                                   uint32_t index, VkQueue *out) {
  lagscope__vk_device *d = device_of(device);
  if (d == NULL || d->GetDeviceQueue == NULL) return;
  d->GetDeviceQueue(device, family, index, out);
  note_queue(d, *out, family);
}

/* Vulkan 1.1's way, the one for queues made with flags (protected ones). */
static VKAPI_ATTR void VKAPI_CALL get_device_queue2(VkDevice device, const VkDeviceQueueInfo2 *info,
                                                    VkQueue *out) {
  lagscope__vk_device *d = device_of(device);
  if (d == NULL || d->GetDeviceQueue2 == NULL) return;
  d->GetDeviceQueue2(device, info, out);
  note_queue(d, *out, info->queueFamilyIndex);
}

/* ---- swapchains and presents --------------------------------------------------------------- */

static VKAPI_ATTR VkResult VKAPI_CALL create_swapchain(VkDevice device,
                                                       const VkSwapchainCreateInfoKHR *info,
                                                       const VkAllocationCallbacks *allocator,
                                                       VkSwapchainKHR *out) {
  lagscope__vk_device *d = device_of(device);
  if (d == NULL || d->CreateSwapchainKHR == NULL) return VK_ERROR_INITIALIZATION_FAILED;
  /* No HUD in frames (--no-hud, --hud-mode overlay): the program's swapchain as it asked. */
  if (!lagscope__preload_hud_wanted() || lagscope__preload_overlay_only())
    return d->CreateSwapchainKHR(device, info, allocator, out);
  VkSwapchainCreateInfoKHR changed;
  lagscope__vk_hud_swapchain_usage(d, info, &changed);
  VkResult rc = d->CreateSwapchainKHR(device, &changed, allocator, out);
  if (rc != VK_SUCCESS && changed.imageUsage != info->imageUsage)
    rc = d->CreateSwapchainKHR(device, info, allocator, out), changed = *info;
  if (rc != VK_SUCCESS) return rc;
  pthread_mutex_lock(&tables);
  lagscope__vk_hud_swapchain_made(d, *out, &changed);
  pthread_mutex_unlock(&tables);
  return rc;
}

static VKAPI_ATTR void VKAPI_CALL destroy_swapchain(VkDevice device, VkSwapchainKHR swapchain,
                                                    const VkAllocationCallbacks *allocator) {
  lagscope__vk_device *d = device_of(device);
  if (d == NULL || d->DestroySwapchainKHR == NULL) return;
  pthread_mutex_lock(&tables);
  lagscope__vk_hud_swapchain_gone(d, swapchain);
  pthread_mutex_unlock(&tables);
  d->DestroySwapchainKHR(device, swapchain, allocator);
}

/* A frame of the Vulkan loop, after the real present; the HUD copied in before it. Both on the
 * watched thread only: the main thread, or the presenting thread that took its place. */
static VKAPI_ATTR VkResult VKAPI_CALL queue_present(VkQueue queue, const VkPresentInfoKHR *info) {
  lagscope__vk_device *d = device_of(queue);
  if (d == NULL || d->QueuePresentKHR == NULL) return VK_ERROR_DEVICE_LOST;
  VkPresentInfoKHR changed = *info;
  VkSemaphore wait = VK_NULL_HANDLE;
  int watched = lagscope__preload_presenter_watched();
  if (watched && lagscope__preload_hud_wanted() && !lagscope__preload_overlay_only() &&
      lagscope__preload_frame_hud_may_draw() && lagscope__vk_hud_draw(d, queue, info, &wait)) {
    changed.waitSemaphoreCount = 1;
    changed.pWaitSemaphores = &wait;
  }
  VkResult rc = d->QueuePresentKHR(queue, &changed);
  if (watched) {
    lagscope__preload_frame_presented(LAGSCOPE__LOOP_VULKAN);
    say_timing_source(d);
  }
  return rc;
}

/* ---- the loader's entry points ------------------------------------------------------------- */

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL get_device_proc(VkDevice device, const char *name);

/* The layer's own definition of name, or NULL. */
static PFN_vkVoidFunction own_device_proc(const char *name) {
  static const struct {
    const char *name;
    PFN_vkVoidFunction fn;
  } own[] = {{"vkGetDeviceProcAddr", (PFN_vkVoidFunction)get_device_proc},
             {"vkDestroyDevice", (PFN_vkVoidFunction)destroy_device},
             {"vkGetDeviceQueue", (PFN_vkVoidFunction)get_device_queue},
             {"vkGetDeviceQueue2", (PFN_vkVoidFunction)get_device_queue2},
             {"vkCreateSwapchainKHR", (PFN_vkVoidFunction)create_swapchain},
             {"vkDestroySwapchainKHR", (PFN_vkVoidFunction)destroy_swapchain},
             {"vkQueuePresentKHR", (PFN_vkVoidFunction)queue_present}};
  for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
    if (strcmp(name, own[i].name) == 0) return own[i].fn;
  return NULL;
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL get_device_proc(VkDevice device, const char *name) {
  PFN_vkVoidFunction own = own_device_proc(name);
  lagscope__vk_device *d = device != VK_NULL_HANDLE ? device_of(device) : NULL;
  /* A Vulkan 1.0 device has no vkGetDeviceQueue2: the program is told so, as without the layer. */
  if (own == (PFN_vkVoidFunction)get_device_queue2 && d != NULL && d->GetDeviceQueue2 == NULL)
    return NULL;
  if (own != NULL) return own;
  return d != NULL ? d->next_proc(device, name) : NULL;
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL get_instance_proc(VkInstance instance,
                                                                  const char *name) {
  if (strcmp(name, "vkGetInstanceProcAddr") == 0) return (PFN_vkVoidFunction)get_instance_proc;
  if (strcmp(name, "vkCreateInstance") == 0) return (PFN_vkVoidFunction)create_instance;
  if (strcmp(name, "vkDestroyInstance") == 0) return (PFN_vkVoidFunction)destroy_instance;
  if (strcmp(name, "vkCreateDevice") == 0) return (PFN_vkVoidFunction)create_device;
  PFN_vkVoidFunction own = own_device_proc(name);
  if (own != NULL) return own;
  vk_instance *found = instance != VK_NULL_HANDLE ? instance_of(instance) : NULL;
  return found != NULL ? found->next_proc(instance, name) : NULL;
}

/* The one name the layer exports: the loader asks it for the two entry points above. */
__attribute__((visibility("default"))) VKAPI_ATTR VkResult VKAPI_CALL
vkNegotiateLoaderLayerInterfaceVersion(VkNegotiateLayerInterface *version) {
  if (version == NULL || version->sType != LAYER_NEGOTIATE_INTERFACE_STRUCT)
    return VK_ERROR_INITIALIZATION_FAILED;
  if (version->loaderLayerInterfaceVersion >= 2) {
    version->loaderLayerInterfaceVersion = 2;
    version->pfnGetInstanceProcAddr = get_instance_proc;
    version->pfnGetDeviceProcAddr = get_device_proc;
    version->pfnGetPhysicalDeviceProcAddr = NULL;
  }
  return VK_SUCCESS;
}
