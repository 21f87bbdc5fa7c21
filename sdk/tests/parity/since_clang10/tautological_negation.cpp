// -Wtautological-negation-compare
bool f(int a) { return a || !a; }
