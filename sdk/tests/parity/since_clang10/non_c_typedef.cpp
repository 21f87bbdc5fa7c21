// -Wnon-c-typedef-for-linkage
typedef struct { void f() {} } S;
