//! The whole pipeline, applier included, on an in-memory tree: never a
//! panic, and a rejected patch changes nothing.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    grammar_patch_fuzz_shared::apply(data);
});

#[path = "../shared.rs"]
mod grammar_patch_fuzz_shared;
