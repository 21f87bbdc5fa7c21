// -Wfree-nonheap-object
extern "C" void free(void *);
void f() { int x; free(&x); }
