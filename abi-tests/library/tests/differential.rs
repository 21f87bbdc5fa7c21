//! Differential tests: the library (through its exported C ABI) against the seed's
//! reference C model, on the standard vectors: identical results, identical table bytes,
//! identical register stores. The deliberate deviations (D1..D4) are modelled by name in
//! abi-tests/src/differential.rs.

use nt_support::differential::Pair;
use nt_support::gen::{standard_vectors, STANDARD};

#[test]
fn library_matches_reference_model_on_standard_vectors() {
    let mut total = nt_support::differential::Counts::default();
    for (idx, (_shape, v)) in standard_vectors(STANDARD.0, STANDARD.1).iter().enumerate() {
        let mut pair = Pair::new(&v.table);
        for (i, op) in v.ops.iter().enumerate() {
            if let Err(e) = pair.step(*op) {
                panic!("vector {idx} op {i}: {e}");
            }
        }
        let c = pair.counts;
        total.hits += c.hits;
        total.refills_compared += c.refills_compared;
        total.refills_d1 += c.refills_d1;
        total.d2_applied += c.d2_applied;
        total.lookups += c.lookups;
    }
    // The run must have exercised every kind of comparison, or it proves nothing.
    assert!(total.hits > 1000, "{total:?}");
    assert!(total.refills_compared > 1000, "{total:?}");
    assert!(total.refills_d1 > 100, "{total:?}");
    assert!(total.d2_applied > 10, "{total:?}");
    assert!(total.lookups > 1000, "{total:?}");
    println!("{total:?}");
}
