// -Wdeprecated-builtins
struct S { S(const S &); };
bool f() { return __has_trivial_copy(S); }
