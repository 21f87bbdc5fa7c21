//! The library-level host tests are this package's integration tests (`tests/`); it has no
//! code of its own.
