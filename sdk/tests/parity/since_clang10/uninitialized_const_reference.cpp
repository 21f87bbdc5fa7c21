// -Wuninitialized-const-reference
void g(const int &);
void f() { int x; g(x); }
