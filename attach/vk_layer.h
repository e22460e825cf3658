/* The preload's Vulkan layer, VK_LAYER_LAGSCOPE_hud (vk_layer.c): what it keeps of a device,
 * shared with the HUD drawn over the swapchain's images (vk_hud.c, vk_blend.c).
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
  X(DestroyDevice) X(GetDeviceQueue) X(GetDeviceQueue2) X(QueuePresentKHR)                       \
  X(CreateSwapchainKHR) X(DestroySwapchainKHR) X(GetSwapchainImagesKHR) X(QueueSubmit)             \
  X(CreateCommandPool) X(DestroyCommandPool) X(AllocateCommandBuffers) X(BeginCommandBuffer)       \
  X(EndCommandBuffer) X(ResetCommandBuffer) X(CreateBuffer) X(DestroyBuffer)                       \
  X(GetBufferMemoryRequirements) X(AllocateMemory) X(FreeMemory) X(BindBufferMemory) X(MapMemory)  \
  X(CreateSemaphore) X(DestroySemaphore) X(CreateFence) X(DestroyFence) X(WaitForFences)           \
  X(ResetFences) X(CreateImageView) X(DestroyImageView) X(CreateFramebuffer)                       \
  X(DestroyFramebuffer) X(CreateRenderPass) X(DestroyRenderPass) X(CreateShaderModule)             \
  X(DestroyShaderModule) X(CreatePipelineLayout) X(DestroyPipelineLayout)                          \
  X(CreateGraphicsPipelines) X(DestroyPipeline) X(CreateDescriptorSetLayout)                       \
  X(DestroyDescriptorSetLayout) X(CreateDescriptorPool) X(DestroyDescriptorPool)                   \
  X(AllocateDescriptorSets) X(UpdateDescriptorSets) X(CmdBeginRenderPass) X(CmdEndRenderPass)      \
  X(CmdBindPipeline) X(CmdBindDescriptorSets) X(CmdPushConstants) X(CmdSetViewport)                \
  X(CmdSetScissor) X(CmdDraw)

#define LAGSCOPE__VK_MAX_QUEUES 16
#define LAGSCOPE__VK_MAX_IMAGES 8 /* a swapchain's images the HUD is drawn into */

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

/* ---- the HUD's blend (vk_blend.c) --------------------------------------------------------- */

/* A swapchain's objects that blend the HUD over its images. */
typedef struct lagscope__vk_blend {
  int made, srgb;
  uint32_t count;
  VkRenderPass pass;
  VkDescriptorSetLayout set_layout;
  VkPipelineLayout layout;
  VkPipeline pipeline;
  VkDescriptorPool pool;
  VkImageView views[LAGSCOPE__VK_MAX_IMAGES];
  VkFramebuffer framebuffers[LAGSCOPE__VK_MAX_IMAGES];
  VkDescriptorSet sets[LAGSCOPE__VK_MAX_IMAGES];
} lagscope__vk_blend;

/* b made for count images of format and extent: 0, or -1 (nothing kept). The program's
 * vkCreateSwapchainKHR, under the layer's lock. */
int lagscope__vk_blend_make(const lagscope__vk_device *d, lagscope__vk_blend *b, VkFormat format,
                            VkExtent2D extent, const VkImage *images, uint32_t count);
/* b's objects destroyed (none may be in flight). */
void lagscope__vk_blend_free(const lagscope__vk_device *d, lagscope__vk_blend *b);
/* Image index's HUD pixels are in buffer (premultiplied ARGB32 words, rows packed); its set is
 * not in flight. */
void lagscope__vk_blend_buffer(const lagscope__vk_device *d, lagscope__vk_blend *b,
                               uint32_t index, VkBuffer buffer);
/* Into c: the HUD (size pixels, its buffer's rows that wide) blended over image index at. */
void lagscope__vk_blend_record(const lagscope__vk_device *d, const lagscope__vk_blend *b,
                               VkCommandBuffer c, uint32_t index, VkOffset2D at, VkExtent2D size);

/* ---- the HUD's draw (vk_hud.c) ------------------------------------------------------------- */

/* info with VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT added to its images' usage, in out, when the
 * surface takes it (the HUD is drawn over them); otherwise out is info. Any thread. F */
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

/* Before the real present: blends the latest HUD image over the first presented image that
 * can take it, on queue, after the present's wait semaphores; *wait is then the semaphore
 * the present must wait on instead, and 1 is returned. 0: nothing drawn. Main thread. */
int lagscope__vk_hud_draw(lagscope__vk_device *d, VkQueue queue, const VkPresentInfoKHR *info,
                          VkSemaphore *wait);

#endif
