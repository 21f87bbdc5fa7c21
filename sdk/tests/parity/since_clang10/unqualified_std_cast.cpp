// -Wunqualified-std-cast-call
namespace std { template <class T> T &&move(T &t) { return static_cast<T &&>(t); } }
int f(int &a) { using namespace std; int b = move(a); return b; }
