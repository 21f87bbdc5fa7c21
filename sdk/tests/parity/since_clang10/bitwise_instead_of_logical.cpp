// -Wbitwise-instead-of-logical
bool g(int a);
bool f(int a, int b) { return g(a) | g(b); }
