// -Wnontrivial-memcall
extern "C" void *memset(void *, int, unsigned long);
struct S { S(const S &); int a; };
void f(S *s) { memset(s, 0, sizeof(S)); }
