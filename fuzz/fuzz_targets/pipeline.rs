//! Arbitrary bytes through the whole pipeline (decode, parse, plan, splice, verify, diff),
//! asserting the invariants every input must keep (tests/common/invariants.rs, shared with
//! the property tests and the stable-toolchain runner in tests/fuzz_smoke.rs).
#![no_main]

#[path = "../../tests/common/patch.rs"]
mod patch;

#[path = "../../tests/common/invariants.rs"]
mod invariants;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Bytes that are not UTF-8 text stop at decode, with an offset inside them.
    let text = match meshjob::decode(data) {
        Ok(t) => t,
        Err((offset, _)) => {
            assert!(offset <= data.len());
            return;
        }
    };
    if let Err(e) = invariants::check(text) {
        panic!("invariant broken: {e}");
    }
});
