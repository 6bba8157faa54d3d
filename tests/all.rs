//! The single integration-test binary; each module says what lives there.

// pest_derive without `std` names `alloc` (suite/vendored.rs derives a parser).
extern crate alloc;

mod suite;
