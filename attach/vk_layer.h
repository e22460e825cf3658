/* The preload's Vulkan layer, VK_LAYER_LAGSCOPE_hud (vk_layer.c): what it keeps of a device,
 * shared with the HUD's copy into the swapchain's images (vk_hud.c).
 *
 * lagscope-run names the layer to the Vulkan loader in the program's environment only
 * (run_vulkan.c: a manifest in its private folder, VK_ADD_LAYER_PATH and VK_INSTANCE_LAYERS);
 * its library is liblagscope-preload.so itself, already in the process. The loader calls
 * vkNegotiateLoaderLayerInterfaceVersion, the one name the layer exports. */
#ifndef LAGSCOPE_ATTACH_VK_LAYER_H
#define LAGSCOPE_ATTACH_VK_LAYER_H

#define VK_NO_PROTOTYPES
#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

/* The device functions the layer calls down the chain: X(name) for PFN_vk<name>. */
#define LAGSCOPE__VK_DEVICE_FUNCTIONS(X)                                                           \
  X(DestroyDevice) X(GetDeviceQueue) X(GetDeviceQueue2) X(QueuePresentKHR) X(CreateSwapchainKHR)                      \
  X(DestroySwapchainKHR) X(GetSwapchainImagesKHR) X(QueueSubmit) X(CreateCommandPool)              \
  X(DestroyCommandPool) X(AllocateCommandBuffers) X(BeginCommandBuffer) X(EndCommandBuffer)        \
  X(ResetCommandBuffer) X(CmdPipelineBarrier) X(CmdCopyBufferToImage) X(CreateBuffer)              \
  X(DestroyBuffer) X(GetBufferMemoryRequirements) X(AllocateMemory) X(FreeMemory)                  \
  X(BindBufferMemory) X(MapMemory) X(CreateSemaphore) X(DestroySemaphore) X(CreateFence)           \
  X(DestroyFence) X(WaitForFences) X(ResetFences)

#define LAGSCOPE__VK_MAX_QUEUES 16

typedef struct lagscope__vk_device {
  void *key; /* the loader's dispatch table: a device's, and its queues' */
  VkDevice handle;
  VkPhysicalDevice physical;
  PFN_vkGetDeviceProcAddr next_proc;
  PFN_vkSetDeviceLoaderData set_loader_data;
  PFN_vkGetPhysicalDeviceSurfaceCapabilitiesKHR surface_capabilities;
  PFN_vkGetPhysicalDeviceMemoryProperties memory_properties;
  int has_present_wait, has_display_timing; /* the driver could tell when a frame was shown */
#define LAGSCOPE__VK_MEMBER(name) PFN_vk##name name;
  LAGSCOPE__VK_DEVICE_FUNCTIONS(LAGSCOPE__VK_MEMBER)
#undef LAGSCOPE__VK_MEMBER
  struct {
    VkQueue queue;
    uint32_t family;
  } queues[LAGSCOPE__VK_MAX_QUEUES];
} lagscope__vk_device;

/* A dispatchable handle's key: the loader's table, its first pointer. F */
static inline void *lagscope__vk_key(const void *handle) { return *(void *const *)handle; }

/* The queue family queue was got from, or UINT32_MAX when the layer did not see it. F */
uint32_t lagscope__vk_queue_family(const lagscope__vk_device *d, VkQueue queue);

/* ---- the HUD's copy (vk_hud.c) ----------------------------------------------------------- */

/* info with VK_IMAGE_USAGE_TRANSFER_DST_BIT added to its images' usage, in out, when the
 * surface takes it (the HUD is copied in); otherwise out is info. Any thread. F */
void lagscope__vk_hud_swapchain_usage(const lagscope__vk_device *d,
                                      const VkSwapchainCreateInfoKHR *info,
                                      VkSwapchainCreateInfoKHR *out);

/* swapchain was made from info (as the driver got it): its images are kept for the HUD when
 * they can take it. Any thread; the layer's lock. */
void lagscope__vk_hud_swapchain_made(lagscope__vk_device *d, VkSwapchainKHR swapchain,
                                     const VkSwapchainCreateInfoKHR *info);

/* swapchain is being destroyed (or its device): the HUD's objects for it go, once the copies
 * in flight are done. Any thread; the layer's lock. */
void lagscope__vk_hud_swapchain_gone(lagscope__vk_device *d, VkSwapchainKHR swapchain);
void lagscope__vk_hud_device_gone(lagscope__vk_device *d);

/* Before the real present: copies the latest HUD image into the first presented image that
 * can take it, on queue, after the present's wait semaphores; *wait is then the semaphore
 * the present must wait on instead, and 1 is returned. 0: nothing drawn. Main thread. */
int lagscope__vk_hud_draw(lagscope__vk_device *d, VkQueue queue, const VkPresentInfoKHR *info,
                          VkSemaphore *wait);

#endif
