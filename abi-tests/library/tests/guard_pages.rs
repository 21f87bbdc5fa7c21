//! The library never reads or writes outside the table and the victim's register block,
//! for any table contents: the table ends exactly where an inaccessible page begins, and
//! every register block ends 8 bytes before one. Any stray access kills the test.

use neuron_translate::abi::{neuron_translate, neuron_translate_mapping_lookup};
use neuron_translate::TranslationCtx;
use nt_support::gen::{address, table, Rng, TableShape};
use nt_support::guard::{page, GuardedPages};

#[test]
fn random_tables_with_every_next_alloc_never_touch_outside() {
    // Pages: 0 table | 1 guard | 2 reg0 | 3 guard | 4 reg1 | 5 guard | 6 reg2 | 7 guard
    let m = GuardedPages::new(8);
    for g in [1, 3, 5, 7] {
        m.protect(g);
    }
    let ctx = m
        .page_ptr(1)
        .wrapping_sub(core::mem::size_of::<TranslationCtx>())
        .cast::<TranslationCtx>();
    let regs: Vec<u64> = [3, 5, 7]
        .iter()
        .map(|&g| m.page_ptr(g) as u64 - 8)
        .collect();
    let mut rng = Rng(0x67_7561_7264); // "guard"
    let mut refills = 0usize;
    for n in 0..=255u8 {
        for _ in 0..8 {
            let mut t = table(&mut rng, TableShape::Wild);
            for (r, &reg) in t.records.iter_mut().zip(&regs) {
                r.reg_location = reg;
            }
            // Pinned slots may hold anything; they are never programmed.
            t.records[3].reg_location = rng.next_u64();
            t.records[4].reg_location = 0;
            t.next_alloc = n;
            // SAFETY: the table's bytes end at the guard page.
            unsafe { ctx.write(t) };
            for _ in 0..16 {
                // SAFETY: as above.
                let cur = unsafe { ctx.read() };
                let a = address(&mut rng, &cur);
                let (mut w, mut l) = (0u64, 0u64);
                // SAFETY: valid table, valid register blocks for every reusable slot.
                unsafe {
                    if cur.find(a).is_none() {
                        refills += 1;
                    }
                    neuron_translate(ctx.cast(), a);
                    neuron_translate_mapping_lookup(ctx.cast(), a, &mut w, &mut l);
                }
            }
        }
    }
    assert!(refills > 10_000, "the refill path ran {refills} times");
    assert_eq!(page() % 8, 0);
}
