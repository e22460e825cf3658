/* A Vulkan program that presents from a second thread, for lagscope-run's tests: it knows
 * nothing of lagscope. Its main thread opens an X11 window and only waits for the render
 * thread (pthread_join: no loop lagscope could see); the render thread ("vk_render") clears
 * each swapchain image to a light blue and presents it, about 60 times a second, for
 * VK_THREAD_FRAMES frames (default 300). At frame VK_THREAD_STALL_AT (default 90; 0: never)
 * it first spins on the CPU for VK_THREAD_STALL_MS (default 1200) in vk_thread_stall. Its
 * queue comes from vkGetDeviceQueue2 (Vulkan 1.1), as newer programs get theirs. */
#define _GNU_SOURCE
#define VK_USE_PLATFORM_XLIB_KHR
#include <vulkan/vulkan.h>

#include <X11/Xlib.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_IMAGES 8
#define WIDTH 400
#define HEIGHT 300

static Display *display;
static Window window;

static void die(const char *what, VkResult rc) {
  fprintf(stderr, "vk_thread: %s failed (%d)\n", what, (int)rc);
  exit(1);
}
#define TRY(call)                                                                                  \
  do {                                                                                             \
    VkResult rc_ = (call);                                                                         \
    if (rc_ != VK_SUCCESS) die(#call, rc_);                                                        \
  } while (0)

static unsigned setting(const char *name, unsigned fallback) {
  const char *value = getenv(name);
  return value != NULL && value[0] != '\0' ? (unsigned)strtoul(value, NULL, 10) : fallback;
}

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

__attribute__((noinline)) static void vk_thread_stall(unsigned ms) {
  uint64_t end = now_ns() + (uint64_t)ms * 1000000u;
  volatile unsigned long spins = 0;
  while (now_ns() < end) spins++;
}

typedef struct gpu {
  VkInstance instance;
  VkPhysicalDevice physical;
  VkSurfaceKHR surface;
  VkDevice device;
  VkQueue queue;
  uint32_t family;
  VkSwapchainKHR swapchain;
  uint32_t count;
  VkImage images[MAX_IMAGES];
  VkCommandPool pool;
  VkCommandBuffer commands[MAX_IMAGES];
  VkSemaphore acquired, drawn;
  VkFence done;
} gpu;

static void make_device(gpu *g) {
  const char *instance_ext[] = {VK_KHR_SURFACE_EXTENSION_NAME, VK_KHR_XLIB_SURFACE_EXTENSION_NAME};
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                           .pApplicationName = "vk_thread",
                           .apiVersion = VK_API_VERSION_1_1};
  VkInstanceCreateInfo ii = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                             .pApplicationInfo = &app,
                             .enabledExtensionCount = 2,
                             .ppEnabledExtensionNames = instance_ext};
  TRY(vkCreateInstance(&ii, NULL, &g->instance));
  uint32_t n = 1;
  VkResult rc = vkEnumeratePhysicalDevices(g->instance, &n, &g->physical);
  if ((rc != VK_SUCCESS && rc != VK_INCOMPLETE) || n == 0) die("a physical device", rc);
  VkXlibSurfaceCreateInfoKHR si = {.sType = VK_STRUCTURE_TYPE_XLIB_SURFACE_CREATE_INFO_KHR,
                                   .dpy = display,
                                   .window = window};
  TRY(vkCreateXlibSurfaceKHR(g->instance, &si, NULL, &g->surface));
  VkBool32 ok = VK_FALSE;
  g->family = 0; /* lavapipe's one family draws and presents */
  TRY(vkGetPhysicalDeviceSurfaceSupportKHR(g->physical, g->family, g->surface, &ok));
  if (!ok) die("presenting on family 0", VK_ERROR_FEATURE_NOT_PRESENT);
  float priority = 1;
  VkDeviceQueueCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                .queueFamilyIndex = g->family,
                                .queueCount = 1,
                                .pQueuePriorities = &priority};
  const char *device_ext[] = {VK_KHR_SWAPCHAIN_EXTENSION_NAME};
  VkDeviceCreateInfo di = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                           .queueCreateInfoCount = 1,
                           .pQueueCreateInfos = &qi,
                           .enabledExtensionCount = 1,
                           .ppEnabledExtensionNames = device_ext};
  TRY(vkCreateDevice(g->physical, &di, NULL, &g->device));
  VkDeviceQueueInfo2 q2 = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_INFO_2,
                           .queueFamilyIndex = g->family,
                           .queueIndex = 0};
  vkGetDeviceQueue2(g->device, &q2, &g->queue);
}

static void make_swapchain(gpu *g) {
  VkSurfaceCapabilitiesKHR caps;
  TRY(vkGetPhysicalDeviceSurfaceCapabilitiesKHR(g->physical, g->surface, &caps));
  VkSurfaceFormatKHR formats[32];
  uint32_t n = 32;
  TRY(vkGetPhysicalDeviceSurfaceFormatsKHR(g->physical, g->surface, &n, formats));
  VkSurfaceFormatKHR format = formats[0];
  for (uint32_t i = 0; i < n; i++)
    if (formats[i].format == VK_FORMAT_B8G8R8A8_UNORM) format = formats[i];
  VkSwapchainCreateInfoKHR si = {
      .sType = VK_STRUCTURE_TYPE_SWAPCHAIN_CREATE_INFO_KHR,
      .surface = g->surface,
      .minImageCount = caps.minImageCount + 1 <= MAX_IMAGES ? caps.minImageCount + 1 : MAX_IMAGES,
      .imageFormat = format.format,
      .imageColorSpace = format.colorSpace,
      .imageExtent = caps.currentExtent.width != UINT32_MAX ? caps.currentExtent
                                                            : (VkExtent2D){WIDTH, HEIGHT},
      .imageArrayLayers = 1,
      .imageUsage = VK_IMAGE_USAGE_TRANSFER_DST_BIT, /* cleared, never drawn */
      .imageSharingMode = VK_SHARING_MODE_EXCLUSIVE,
      .preTransform = VK_SURFACE_TRANSFORM_IDENTITY_BIT_KHR,
      .compositeAlpha = VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR,
      .presentMode = VK_PRESENT_MODE_FIFO_KHR,
      .clipped = VK_TRUE};
  TRY(vkCreateSwapchainKHR(g->device, &si, NULL, &g->swapchain));
  g->count = MAX_IMAGES;
  TRY(vkGetSwapchainImagesKHR(g->device, g->swapchain, &g->count, g->images));
}

/* One command buffer per image: cleared to light blue, then ready to present. */
static void record(gpu *g) {
  VkCommandPoolCreateInfo pi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                .queueFamilyIndex = g->family};
  TRY(vkCreateCommandPool(g->device, &pi, NULL, &g->pool));
  VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                    .commandPool = g->pool,
                                    .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                    .commandBufferCount = g->count};
  TRY(vkAllocateCommandBuffers(g->device, &ai, g->commands));
  VkImageSubresourceRange range = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
  VkClearColorValue blue = {.float32 = {0.55f, 0.75f, 0.95f, 1.0f}};
  for (uint32_t i = 0; i < g->count; i++) {
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    TRY(vkBeginCommandBuffer(g->commands[i], &bi));
    VkImageMemoryBarrier b = {.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER,
                              .dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                              .oldLayout = VK_IMAGE_LAYOUT_UNDEFINED,
                              .newLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                              .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                              .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                              .image = g->images[i],
                              .subresourceRange = range};
    vkCmdPipelineBarrier(g->commands[i], VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, NULL, 0, NULL, 1, &b);
    vkCmdClearColorImage(g->commands[i], g->images[i], VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &blue,
                         1, &range);
    b.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT, b.dstAccessMask = 0;
    b.oldLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
    b.newLayout = VK_IMAGE_LAYOUT_PRESENT_SRC_KHR;
    vkCmdPipelineBarrier(g->commands[i], VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, 0, 0, NULL, 0, NULL, 1, &b);
    TRY(vkEndCommandBuffer(g->commands[i]));
  }
  VkSemaphoreCreateInfo sem = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
  VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  TRY(vkCreateSemaphore(g->device, &sem, NULL, &g->acquired));
  TRY(vkCreateSemaphore(g->device, &sem, NULL, &g->drawn));
  TRY(vkCreateFence(g->device, &fi, NULL, &g->done));
}

/* One frame: acquired, cleared, presented; the next waits for it (one frame in flight). */
static void frame(gpu *g) {
  uint32_t index;
  TRY(vkAcquireNextImageKHR(g->device, g->swapchain, UINT64_MAX, g->acquired, VK_NULL_HANDLE,
                            &index));
  VkPipelineStageFlags stage = VK_PIPELINE_STAGE_TRANSFER_BIT;
  VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                     .waitSemaphoreCount = 1,
                     .pWaitSemaphores = &g->acquired,
                     .pWaitDstStageMask = &stage,
                     .commandBufferCount = 1,
                     .pCommandBuffers = &g->commands[index],
                     .signalSemaphoreCount = 1,
                     .pSignalSemaphores = &g->drawn};
  TRY(vkQueueSubmit(g->queue, 1, &si, g->done));
  VkPresentInfoKHR pi = {.sType = VK_STRUCTURE_TYPE_PRESENT_INFO_KHR,
                         .waitSemaphoreCount = 1,
                         .pWaitSemaphores = &g->drawn,
                         .swapchainCount = 1,
                         .pSwapchains = &g->swapchain,
                         .pImageIndices = &index};
  TRY(vkQueuePresentKHR(g->queue, &pi));
  TRY(vkWaitForFences(g->device, 1, &g->done, VK_TRUE, UINT64_MAX));
  TRY(vkResetFences(g->device, 1, &g->done));
}

static void *render(void *unused) {
  (void)unused;
  gpu g = {0};
  make_device(&g);
  make_swapchain(&g);
  record(&g);
  unsigned frames = setting("VK_THREAD_FRAMES", 300), stall_at = setting("VK_THREAD_STALL_AT", 90);
  uint64_t next = now_ns();
  for (unsigned i = 1; i <= frames; i++) {
    if (i == stall_at) vk_thread_stall(setting("VK_THREAD_STALL_MS", 1200));
    frame(&g);
    next += 16666667u; /* about 60 Hz: Xvfb has no vertical blank to wait for */
    struct timespec at = {(time_t)(next / 1000000000u), (long)(next % 1000000000u)};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL);
  }
  vkDeviceWaitIdle(g.device);
  vkDestroySemaphore(g.device, g.acquired, NULL);
  vkDestroySemaphore(g.device, g.drawn, NULL);
  vkDestroyFence(g.device, g.done, NULL);
  vkDestroyCommandPool(g.device, g.pool, NULL);
  vkDestroySwapchainKHR(g.device, g.swapchain, NULL);
  vkDestroyDevice(g.device, NULL);
  vkDestroySurfaceKHR(g.instance, g.surface, NULL);
  vkDestroyInstance(g.instance, NULL);
  return NULL;
}

int main(void) {
  XInitThreads();
  display = XOpenDisplay(NULL);
  if (display == NULL) {
    fprintf(stderr, "vk_thread: no display\n");
    return 1;
  }
  window = XCreateSimpleWindow(display, DefaultRootWindow(display), 0, 0, WIDTH, HEIGHT, 0, 0, 0);
  XStoreName(display, window, "vk_thread");
  XMapWindow(display, window);
  XSync(display, False);
  pthread_t thread;
  if (pthread_create(&thread, NULL, render, NULL) != 0) return 1;
  pthread_setname_np(thread, "vk_render");
  pthread_join(thread, NULL);
  XDestroyWindow(display, window);
  XCloseDisplay(display);
  return 0;
}
