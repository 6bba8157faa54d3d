//! The SEARCH/REPLACE parser, lowering and validation on any text: never a panic.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    grammar_patch_fuzz_shared::parse(grammar_patch::formats::Format::Searchreplace, data);
});

#[path = "../shared.rs"]
mod grammar_patch_fuzz_shared;
