//! Every loss's oracle on a small query decoded from the bytes, see svmmap::fuzzing::check_oracle.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    svmmap::fuzzing::check_oracle(data);
});
