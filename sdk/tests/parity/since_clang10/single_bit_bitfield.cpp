// -Wsingle-bit-bitfield-constant-conversion
struct S { int b : 1; };
void f(S &s) { s.b = 1; }
