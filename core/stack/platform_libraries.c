/*
 * The platform's objects: the libraries every program shares (the C library, GLib and GTK, Qt,
 * SDL, X11, Wayland, Mesa, ...), told by their names, wherever they were loaded from. Whatever
 * else a program loaded is what it brought (its executable, its private libraries and plugins,
 * in /usr/lib/x86_64-linux-gnu as Debian's mousepad ships libmousepad.so.0, or in /opt): its
 * own code (lagscope__code_of, symbols.c). A folder cannot tell: Linux distributions install
 * both kinds side by side. Only the port knows folders that hold the OS's objects alone
 * (lagscope__os_folder: Darwin's sealed /System/ and /usr/lib/).
 *
 * The one list, in one place. A library the list misses counts as the program's: its frames
 * then show in "your code" too, which names more than needed but never hides the program's.
 */
#include "internal.h"

#include <string.h>

/* Names of the platform's libraries, matched against the object's file name: "name" matches
 * name followed by its version or suffix (".so.6", "-2.31.so", "62.so"), so that
 * "libc" is libc.so.6 and not libcairo; "name*" matches every name that begins so (a family:
 * libX11, libXext, libXrandr for "libX*"). */
static const char *const platform_names[] = {
    /* The C and C++ runtimes, the loader, the compilers' and sanitizers' runtimes. */
    "ld-linux*", "ld-musl*", "libc", "libm", "libdl", "librt", "libpthread", "libresolv",
    "libanl", "libnsl", "libcrypt", "libmvec", "libnss_*", "libthread_db", "libgcc_s",
    "libstdc++", "libc++*", "libatomic", "libgomp", "libquadmath", "libgfortran", "libasan",
    "libubsan", "libtsan", "liblsan", "libhwasan", "libunwind*", "libobjc*", "libdispatch",
    "libSystem*",
    /* The kernel's vDSO. */
    "linux-vdso*", "linux-gate*", "[vdso]",
    /* GLib, GTK and their stack; Xfce's and GNOME's shared libraries. */
    "libglib*", "libgobject*", "libgio*", "libgmodule*", "libgthread*", "libgirepository*",
    "libgtk*", "libgdk*", "libatk*", "libatspi", "libpango*", "libcairo*", "libharfbuzz*",
    "libfreetype", "libfontconfig", "libfribidi", "libpixman*", "libthai", "libdatrie",
    "libgraphite2", "libepoxy", "libadwaita*", "libhandy*", "libvte*", "libwebkit*",
    "libjavascriptcore*", "libpeas*", "libgraphene*", "librsvg*", "libcloudproviders",
    "libsigc*", "libxfce4*", "libxfconf*", "libexo*", "libgarcon*", "libgspell*", "libenchant*",
    "libhunspell*", "libsoup*", "libjson-glib*", "libsecret*", "libnotify", "libcanberra*",
    "libgudev*", "libcolord*", "libpolkit*", "libgck*", "libgcr*", "libibus*", "libdconf",
    "libportal*", "libtracker*",
    /* Qt, KDE's frameworks, SDL. */
    "libQt*", "libKF5*", "libKF6*", "libSDL*",
    /* X11, Wayland, input. */
    "libX*", "libxcb*", "libxkb*", "libxshmfence", "libSM", "libICE", "libfontenc",
    "libwayland*", "libdecor*", "libinput", "libevdev", "libmtdev", "libwacom", "libudev",
    /* OpenGL, EGL, Vulkan, Mesa and the vendors' drivers. */
    "libGL*", "libEGL*", "libOpenGL", "libOSMesa", "libglapi", "libgbm", "libgallium*",
    "libdrm*", "libvulkan*", "libVkLayer*", "libLLVM*", "libnvidia*", "libcuda", "libsensors",
    /* Compression, images, text, XML. */
    "libz", "libzstd", "liblzma", "libbz2", "liblz4", "libbrotli*", "libpng*", "libjpeg",
    "libturbojpeg", "libtiff*", "libwebp*", "libsharpyuv", "libjbig", "libLerc", "libdeflate",
    "libgif", "libopenjp2", "liblcms2", "libffi", "libpcre*", "libicu*", "libunistring",
    "libidn*", "libdouble-conversion", "libmd4c", "libb2", "libexpat", "libxml2", "libxslt",
    "libyaml*", "libjson-c",
    /* The system's services and security. */
    "libdbus*", "libsystemd", "libselinux", "libmount", "libblkid", "libuuid", "libcap*",
    "libgcrypt", "libgpg-error", "libssl", "libcrypto", "libgnutls*", "libnettle", "libhogweed",
    "libgmp*", "libtasn1", "libp11-kit", "libkrb5*", "libk5crypto", "libgssapi*", "libcom_err",
    "libkeyutils", "libsasl2", "libldap*", "liblber*", "libsqlite3", "libcurl*", "libnghttp*",
    "libssh*", "libpsl", "libnss3", "libnssutil3", "libsmime3", "libnspr4", "libplc4",
    "libplds4", "libpam*", "libaudit", "libacl", "libattr", "libapparmor", "libseccomp",
    "libasyncns", "libpciaccess", "libargon2", "libarchive", "libassuan",
    "libbsd", "libmd", "libelf", "libdw", "libtinfo", "libncurses*", "libreadline", "libedit",
    "libusb*", "libcups*", "libavahi*",
    /* Sound and media. */
    "libasound", "libpulse*", "libpipewire*", "libjack*", "libsndfile", "libogg", "libvorbis*",
    "libFLAC*", "libopus*", "libmpg123", "libmp3lame", "libspeex*", "libsoxr", "libsamplerate",
    "libgst*", "libavcodec", "libavformat", "libavutil", "libavfilter", "libavdevice",
    "libswscale", "libswresample", "libpostproc", "libaom", "libdav1d", "libvpx", "libx264",
    "libx265", "libtheora*", "libSvtAv1*", "libavif", "libheif",
    /* General-purpose C++ libraries. */
    "libboost*", "libabsl*", "libprotobuf*", "libgrpc*",
};

/* Folders of the platform's plugins, matched as "/name/" below a library folder ("/lib/",
 * "/lib64/", "/lib32/": a developer's ~/src/security/ is no PAM module's): GTK's input methods
 * and print backends, GIO's modules, Mesa's DRI drivers, Qt's plugins. */
static const char *const platform_folders[] = {
    "gtk-2.0", "gtk-3.0", "gtk-4.0", "gdk-pixbuf-2.0", "gio/modules", "gvfs", "qt5/plugins",
    "qt6/plugins", "dri", "vdpau", "gbm", "gstreamer-1.0", "gconv", "pkcs11", "alsa-lib",
    "pulseaudio", "pipewire-0.3", "spa-0.2", "libproxy", "sasl2", "security", "krb5",
    "engines-3", "ossl-modules",
};

/* What may follow a name without '*': its version or suffix, never another word of a name
 * (a letter, '_': libaudit_app is not libaudit). */
static int ends_name(char c) {
  return c == '\0' || c == '.' || c == '-' || (c >= '0' && c <= '9');
}

static int name_matches(const char *file, const char *name) {
  size_t n = strlen(name);
  if (n > 0 && name[n - 1] == '*') return strncmp(file, name, n - 1) == 0;
  return strncmp(file, name, n) == 0 && ends_name(file[n]);
}

/* The end of path's first library folder ("/lib/", "/lib64/", "/lib32/"), or NULL. */
static const char *below_library_folder(const char *path) {
  static const char *const folders[] = {"/lib/", "/lib64/", "/lib32/"};
  const char *first = NULL;
  for (size_t i = 0; i < sizeof(folders) / sizeof(folders[0]); i++) {
    const char *p = strstr(path, folders[i]);
    if (p != NULL && (first == NULL || p + strlen(folders[i]) < first))
      first = p + strlen(folders[i]) - 1; /* at its closing '/' */
  }
  return first;
}

/* "/folder/" within path, from start (a '/') on. */
static int in_folder(const char *start, const char *folder) {
  size_t n = strlen(folder);
  for (const char *p = strstr(start, folder); p != NULL; p = strstr(p + 1, folder))
    if (p > start && p[-1] == '/' && p[n] == '/') return 1;
  return 0;
}

int lagscope__platform_object(const char *module) {
  if (module == NULL || module[0] == '\0') return 0;
  if (lagscope__os_folder(module)) return 1;
  const char *slash = strrchr(module, '/');
  const char *file = slash != NULL ? slash + 1 : module;
  for (size_t i = 0; i < sizeof(platform_names) / sizeof(platform_names[0]); i++)
    if (name_matches(file, platform_names[i])) return 1;
  const char *libraries = below_library_folder(module);
  size_t folders = libraries != NULL ? sizeof(platform_folders) / sizeof(platform_folders[0]) : 0;
  for (size_t i = 0; i < folders; i++)
    if (in_folder(libraries, platform_folders[i])) return 1;
  return 0;
}
