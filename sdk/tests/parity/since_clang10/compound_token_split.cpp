// -Wcompound-token-split-by-macro
#define M(x) (x)
int f() { return M({ 1; }); }
