// The operations of ops.cpp, by name. check_ops.py names an operation, never its number:
// it reads the numbers from this file (cases.py), so adding or renumbering one cannot
// shift another's expectation.
#ifndef OPS_CASES_H
#define OPS_CASES_H

enum ops_case {
    ABS = 0,
    CEIL = 1,
    FLOOR = 2,
    SIN = 3,
    COS = 4,
    TAN = 5,
    LOG = 6,
    LOG2 = 7,
    LOG10 = 8,
    EXP = 9,
    BITWISE_NOT = 10,
    POW_TS = 11, // tensor ** scalar
    POW_ST = 12, // scalar ** tensor
    POW_TT = 13,
    CLAMP = 14, // min T, max S
    ADD_TT = 15,
    ADD_TS = 16,
    SUB_TT = 17,
    SUB_TS = 18,
    MUL_TT = 19,
    MUL_TS = 20,
    DIV_TT = 21,
    DIV_TS = 22,
    AND_TT = 23,
    AND_TS = 24,
    AND_ST = 25,
    OR_TT = 26,
    OR_TS = 27,
    OR_ST = 28,
};

#endif
