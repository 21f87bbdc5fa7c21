// -Wvla-cxx-extension
int f(int n) { int v[n]; v[0] = 1; return v[0]; }
