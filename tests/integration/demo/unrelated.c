/* The demo's second build for demo_signature: this file, linked before demo.c, adds a function
 * the demo never calls, so that every one of the demo's own functions lands at another offset,
 * as an edit elsewhere in an app moves them. A signature must not change for it. */
int demo_unrelated_function(int n);

int demo_unrelated_function(int n) {
  volatile int sum = 0;
  for (int i = 0; i < n; i++) sum += i * n % 7; /* a body of some size, kept by volatile */
  for (int i = 0; i < n; i++) sum ^= i << 3;
  return sum;
}
