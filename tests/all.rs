//! The single integration-test binary; each module says what lives there.

mod suite;
