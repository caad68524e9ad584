//! Training on a tiny problem decoded from the bytes, see svmmap::fuzzing::check_solver.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    svmmap::fuzzing::check_solver(data);
});
