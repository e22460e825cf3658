// A C++ function whose mangled name the cxx test expects demangled.
namespace demo {
struct widget {
  static int frobnicate(int x);
  int poke(long times) const;
};

__attribute__((noinline)) int widget::frobnicate(int x) { return x * 2 + 1; }

__attribute__((noinline)) int widget::poke(long times) const { return static_cast<int>(times) + 3; }
}  // namespace demo

extern "C" int (*demo_frobnicate_address(void))(int) { return &demo::widget::frobnicate; }

// The address of a non-static member function, as the code it runs: a call through a
// pointer-to-member, with the callee's entry read from the vtable-free representation.
extern "C" void *demo_poke_address(void) {
  int (demo::widget::*member)(long) const = &demo::widget::poke;
  void *address;
  static_assert(sizeof(member) >= sizeof(address), "Itanium ABI member pointer");
  __builtin_memcpy(&address, &member, sizeof(address)); // ptr field of a non-virtual member
  return address;
}

// Something of libstdc++'s, so that the test links it, as every C++ program does: the
// demangler is found in the process, never linked into lagscope.
static int *volatile escaped; // a new whose result escapes cannot be optimised away
extern "C" int demo_uses_libstdcxx(void) {
  escaped = new int(3);
  int v = *escaped;
  delete escaped;
  return v;
}
