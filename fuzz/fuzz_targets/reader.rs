//! The LETOR reader on arbitrary bytes (first byte: options), see svmmap::fuzzing::check_reader.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    svmmap::fuzzing::check_reader(data);
});
